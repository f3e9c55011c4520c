//! A small JSON Schema (2020-12) checker and instance generator over `serde_json::Value`,
//! for the keywords the server's `OpenAPI` document uses: `$ref`, `type`, `enum`,
//! `const`, numeric bounds, string lengths and `pattern`, `properties`, `required`,
//! `additionalProperties`, `min/maxProperties`, `dependentRequired`, `items`, `allOf`,
//! `anyOf`, `oneOf`, `not`. Annotations (`format`, `description`) are ignored, as the
//! specification says.
//!
//! The generator is deterministic: for an object schema it enumerates the ways through
//! its `oneOf`/`anyOf` branches, makes a base instance of each, then instances valid at
//! every boundary (each property at its minimum and maximum, each enum value, null
//! where allowed), a few seeded random mixes, and instances that break one rule of a
//! valid one (a bound, a type, a length, a pattern, a required property, two fields that
//! exclude each other). Every instance is classified by the checker, never by guessing.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

/// The document whose `$ref`s schemas resolve in.
pub(crate) struct Document<'a> {
    root: &'a Value,
}

/// Strings tried for a string without a fixture, and to break a `pattern`.
const STRINGS: [&str; 4] = ["", "value", "tab\there ünïcödé", "line\nbreak\u{7f}"];

impl<'a> Document<'a> {
    pub(crate) fn new(root: &'a Value) -> Self {
        Self { root }
    }

    /// `schema` with its `$ref`s followed.
    pub(crate) fn resolve(&self, mut schema: &'a Value) -> &'a Value {
        while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let pointer = reference.strip_prefix('#').expect("a local reference");
            schema = self.root.pointer(pointer).unwrap_or_else(|| panic!("{reference} resolves"));
        }
        schema
    }

    /// Whether `value` is valid against `schema`; the first rule it breaks otherwise.
    pub(crate) fn check(&self, schema: &Value, value: &Value) -> Result<(), String> {
        let schema = match schema {
            Value::Bool(true) => return Ok(()),
            Value::Bool(false) => return Err("the schema `false` takes nothing".to_owned()),
            Value::Object(_) => self.resolve(schema),
            other => panic!("not a schema: {other}"),
        };
        let fail = |rule: &str| Err(format!("{rule} (schema {schema}, value {value})"));
        if let Some(types) = schema.get("type") {
            let allowed: Vec<&str> = match types {
                Value::String(one) => vec![one.as_str()],
                Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if !allowed.iter().any(|kind| is_type(value, kind)) {
                return fail("type");
            }
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array)
            && !values.contains(value)
        {
            return fail("enum");
        }
        if schema.get("const").is_some_and(|constant| constant != value) {
            return fail("const");
        }
        if value.is_number() {
            let number = |key: &str| schema.get(key).filter(|bound| bound.is_number());
            if number("minimum").is_some_and(|minimum| compare(value, minimum).is_lt()) {
                return fail("minimum");
            }
            if number("maximum").is_some_and(|maximum| compare(value, maximum).is_gt()) {
                return fail("maximum");
            }
            if number("exclusiveMinimum").is_some_and(|minimum| compare(value, minimum).is_le()) {
                return fail("exclusiveMinimum");
            }
            if number("exclusiveMaximum").is_some_and(|maximum| compare(value, maximum).is_ge()) {
                return fail("exclusiveMaximum");
            }
        }
        if let Some(text) = value.as_str() {
            let length = text.chars().count() as u64;
            if schema.get("minLength").and_then(Value::as_u64).is_some_and(|minimum| length < minimum) {
                return fail("minLength");
            }
            if schema.get("maxLength").and_then(Value::as_u64).is_some_and(|maximum| length > maximum) {
                return fail("maxLength");
            }
            if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
                let pattern = regex::Regex::new(pattern).expect("a pattern the regex crate reads");
                if !pattern.is_match(text) {
                    return fail("pattern");
                }
            }
        }
        if let Some(object) = value.as_object() {
            self.check_object(schema, object).or_else(|rule| fail(&rule))?;
        }
        if let Some(items) = value.as_array() {
            if let Some(item) = schema.get("items") {
                for element in items {
                    self.check(item, element)?;
                }
            }
            let count = items.len() as u64;
            if schema.get("minItems").and_then(Value::as_u64).is_some_and(|minimum| count < minimum) {
                return fail("minItems");
            }
            if schema.get("maxItems").and_then(Value::as_u64).is_some_and(|maximum| count > maximum) {
                return fail("maxItems");
            }
        }
        for part in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            self.check(part, value)?;
        }
        if let Some(parts) = schema.get("anyOf").and_then(Value::as_array)
            && !parts.iter().any(|part| self.check(part, value).is_ok())
        {
            return fail("anyOf: no branch holds");
        }
        if let Some(parts) = schema.get("oneOf").and_then(Value::as_array) {
            let holding = parts.iter().filter(|part| self.check(part, value).is_ok()).count();
            if holding != 1 {
                return fail(&format!("oneOf: {holding} branches hold"));
            }
        }
        if schema.get("not").is_some_and(|not| self.check(not, value).is_ok()) {
            return fail("not");
        }
        Ok(())
    }

    fn check_object(&self, schema: &Value, object: &Map<String, Value>) -> Result<(), String> {
        for name in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !object.contains_key(name.as_str().unwrap_or_default()) {
                return Err(format!("required `{name}`"));
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (name, value) in object {
            match properties.and_then(|properties| properties.get(name)) {
                Some(property) => self.check(property, value)?,
                None => {
                    if let Some(additional) = schema.get("additionalProperties") {
                        self.check(additional, value)?;
                    }
                }
            }
        }
        let count = object.len() as u64;
        if schema.get("minProperties").and_then(Value::as_u64).is_some_and(|minimum| count < minimum) {
            return Err("minProperties".to_owned());
        }
        if schema.get("maxProperties").and_then(Value::as_u64).is_some_and(|maximum| count > maximum) {
            return Err("maxProperties".to_owned());
        }
        for (name, needed) in schema.get("dependentRequired").and_then(Value::as_object).into_iter().flatten() {
            let missing = needed
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .find(|need| object.contains_key(name) && !object.contains_key(*need));
            if let Some(missing) = missing {
                return Err(format!("dependentRequired: `{name}` needs `{missing}`"));
            }
        }
        Ok(())
    }

    /// The conjunctions of plain object schemas `schema` is made of: one per way through
    /// its `oneOf`/`anyOf` branches (`allOf` joins its parts' ways).
    fn ways(&self, schema: &'a Value) -> Vec<Vec<&'a Value>> {
        let schema = self.resolve(schema);
        let mut ways: Vec<Vec<&'a Value>> = vec![Vec::new()];
        if schema.get("properties").is_some() || schema.get("required").is_some() || schema.get("type").is_some() {
            ways[0].push(schema);
        }
        for part in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            let parts = self.ways(part);
            ways = ways
                .iter()
                .flat_map(|way| parts.iter().map(move |part| way.iter().chain(part).copied().collect()))
                .collect();
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(branches) = schema.get(key).and_then(Value::as_array) {
                let choices: Vec<Vec<&'a Value>> = branches.iter().flat_map(|branch| self.ways(branch)).collect();
                ways = ways
                    .iter()
                    .flat_map(|way| choices.iter().map(move |choice| way.iter().chain(choice).copied().collect()))
                    .collect();
            }
        }
        ways
    }

    /// Values valid against `schema` at its boundaries, `fixtures` first.
    fn examples(&self, schema: &'a Value, fixtures: &[Value]) -> Vec<Value> {
        let schema = self.resolve(schema);
        let mut candidates: Vec<Value> = fixtures.to_vec();
        for key in ["oneOf", "anyOf"] {
            for branch in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
                candidates.extend(self.examples(branch, &[]));
            }
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            candidates.extend(values.iter().cloned());
        }
        for kind in types(schema) {
            match kind {
                "null" => candidates.push(Value::Null),
                "boolean" => candidates.extend([json!(true), json!(false)]),
                "integer" | "number" => {
                    let minimum = schema.get("minimum").and_then(Value::as_i64).unwrap_or(0);
                    candidates.push(json!(minimum));
                    // Without a maximum, the largest the `int64` format takes.
                    candidates.push(schema.get("maximum").cloned().unwrap_or(json!(i64::MAX)));
                }
                "string" if fixtures.is_empty() => {
                    candidates.extend(STRINGS.iter().map(|text| json!(text)));
                    if let Some(maximum) = schema.get("maxLength").and_then(Value::as_u64) {
                        candidates.push(json!("é".repeat(usize::try_from(maximum).unwrap_or(0))));
                    }
                }
                "object" if schema.get("properties").is_none() => {
                    candidates.push(json!({}));
                    let keys = schema.get("maxProperties").and_then(Value::as_u64).unwrap_or(1);
                    candidates.push(Value::Object(keyed(keys)));
                }
                "array" => candidates.push(json!([])),
                _ => {}
            }
        }
        let mut seen = BTreeSet::new();
        candidates.retain(|candidate| self.check(schema, candidate).is_ok() && seen.insert(candidate.to_string()));
        candidates
    }

    /// Values that break one rule of `schema` (each still to be checked in its place).
    fn breaking(&self, schema: &'a Value) -> Vec<Value> {
        let schema = self.resolve(schema);
        let mut candidates = Vec::new();
        for key in ["oneOf", "anyOf"] {
            for branch in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
                candidates.extend(self.breaking(branch));
            }
        }
        if let Some(minimum) = schema.get("minimum").and_then(Value::as_i64) {
            candidates.push(json!(minimum - 1));
        }
        if let Some(maximum) = schema.get("maximum").and_then(Value::as_i64) {
            candidates.push(json!(maximum + 1));
        }
        if let Some(maximum) = schema.get("maxLength").and_then(Value::as_u64) {
            candidates.push(json!("é".repeat(usize::try_from(maximum).unwrap_or(0) + 1)));
        }
        if let Some(maximum) = schema.get("maxProperties").and_then(Value::as_u64) {
            candidates.push(Value::Object(keyed(maximum + 1)));
        }
        if schema.get("enum").is_some() {
            candidates.push(json!("not-one-of-them"));
        }
        if schema.get("pattern").is_some() {
            candidates.extend(STRINGS.iter().map(|text| json!(text)));
        }
        let mut seen = BTreeSet::new();
        candidates.retain(|candidate| self.check(schema, candidate).is_err() && seen.insert(candidate.to_string()));
        // A value of another type.
        let other = [json!("text"), json!(12345), json!(true), json!({}), json!([1])];
        candidates.extend(other.into_iter().find(|candidate| self.check(schema, candidate).is_err()));
        candidates
    }

    /// Instances of the object schema `schema`: those it takes, and those that break one
    /// of its rules. `fixtures` gives the values to try first for a property, by name
    /// (ids of live sessions, a `.http` text that runs).
    pub(crate) fn instances(&self, schema: &'a Value, fixtures: &BTreeMap<&str, Vec<Value>>, seed: u64) -> Instances {
        let mut out = Instances::default();
        let mut random = Random(seed | 1);
        let mut everyone: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let mut bases = Vec::new();
        for way in self.ways(schema) {
            let mut properties: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
            let mut required = BTreeSet::new();
            for part in &way {
                for (name, property) in part.get("properties").and_then(Value::as_object).into_iter().flatten() {
                    properties.entry(name.as_str()).or_default().push(property);
                }
                for name in part.get("required").and_then(Value::as_array).into_iter().flatten() {
                    required.insert(name.as_str().unwrap_or_default());
                }
            }
            // The values a property may take on this way: valid against all its schemas.
            let options: BTreeMap<&str, Vec<Value>> = properties
                .iter()
                .map(|(name, schemas)| {
                    let fixture = fixtures.get(name).map_or(&[][..], Vec::as_slice);
                    let mut values: Vec<Value> = schemas.iter().flat_map(|one| self.examples(one, fixture)).collect();
                    let mut distinct = BTreeSet::new();
                    values.retain(|value| {
                        schemas.iter().all(|one| self.check(one, value).is_ok()) && distinct.insert(value.to_string())
                    });
                    (*name, values)
                })
                .collect();
            let mut base = Map::new();
            for name in &required {
                match options.get(name).and_then(|values| values.first()) {
                    Some(value) => base.insert((*name).to_owned(), value.clone()),
                    None => continue,
                };
            }
            let base = Value::Object(base);
            if self.check(schema, &base).is_err() {
                continue;
            }
            out.add(self, schema, base.clone());
            for (name, values) in &options {
                everyone
                    .entry((*name).to_owned())
                    .or_default()
                    .extend(values.iter().filter(|value| !value.is_null()).cloned());
                for value in values {
                    out.add(self, schema, with(&base, name, value.clone()));
                }
                for schema_of in &properties[name] {
                    for bad in self.breaking(schema_of) {
                        out.add(self, schema, with(&base, name, bad));
                    }
                }
            }
            for name in &required {
                let mut without = base.clone();
                if let Some(object) = without.as_object_mut() {
                    object.remove(*name);
                }
                out.add(self, schema, without);
            }
            // Seeded mixes: each optional property with a chance of one half.
            for _ in 0..4 {
                let mut mix = base.clone();
                for (name, values) in &options {
                    if !values.is_empty() && random.next().is_multiple_of(2) {
                        let pick = values[usize::try_from(random.next()).unwrap_or(0) % values.len()].clone();
                        mix = with(&mix, name, pick);
                    }
                }
                out.add(self, schema, mix);
            }
            bases.push(base);
        }
        // Two properties that exclude each other, each with a value it may take.
        for base in &bases {
            let names: Vec<&String> = everyone.keys().collect();
            for (index, first) in names.iter().enumerate() {
                for second in &names[index + 1..] {
                    let (Some(one), Some(other)) = (everyone[*first].first(), everyone[*second].first()) else {
                        continue;
                    };
                    let both = with(&with(base, first, one.clone()), second, other.clone());
                    out.add(self, schema, both);
                }
            }
        }
        for other in [Value::Null, json!("not an object"), json!([])] {
            out.add(self, schema, other);
        }
        out
    }
}

/// Instances by what the checker says of them, without repeats.
#[derive(Default)]
pub(crate) struct Instances {
    pub(crate) valid: Vec<Value>,
    /// With the rule each breaks.
    pub(crate) invalid: Vec<(Value, String)>,
    seen: BTreeSet<String>,
}

impl Instances {
    /// Keeps `value` (once) as the checker classifies it.
    fn add(&mut self, document: &Document<'_>, schema: &Value, value: Value) {
        if !self.seen.insert(value.to_string()) {
            return;
        }
        match document.check(schema, &value) {
            Ok(()) => self.valid.push(value),
            Err(rule) => self.invalid.push((value, rule)),
        }
    }
}

/// The JSON types `schema` allows.
pub(crate) fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn is_type(value: &Value, kind: &str) -> bool {
    match kind {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        // JSON Schema: any number with no fractional part.
        "integer" => value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|number| number.fract() == 0.0),
        _ => false,
    }
}

/// Orders two JSON numbers exactly when both are integers.
fn compare(left: &Value, right: &Value) -> std::cmp::Ordering {
    match (left.as_i64(), right.as_i64(), left.as_u64(), right.as_u64()) {
        (Some(left), Some(right), _, _) => left.cmp(&right),
        (_, _, Some(left), Some(right)) => left.cmp(&right),
        _ => {
            let (left, right) = (left.as_f64().unwrap_or(f64::NAN), right.as_f64().unwrap_or(f64::NAN));
            left.partial_cmp(&right).unwrap_or(std::cmp::Ordering::Equal)
        }
    }
}

/// An object of `count` keys.
fn keyed(count: u64) -> Map<String, Value> {
    (0..count).map(|index| (format!("key{index}"), json!(index))).collect()
}

/// `base` with `name` set to `value`.
fn with(base: &Value, name: &str, value: Value) -> Value {
    let mut changed = base.clone();
    if let Some(object) = changed.as_object_mut() {
        object.insert(name.to_owned(), value);
    }
    changed
}

/// xorshift64: a fixed sequence from a seed, so that every run makes the same instances.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
