//! Dependencies by reference: a selected request that reads another's response
//! (`{{login.response.body.$.token}}`, httpyac's `{{login.token}}`, directly or through
//! file variables) runs that request first when the selection leaves it out, the way
//! httpyac's `# @ref` does explicitly. A run of a whole file needs none of this: its
//! requests run in order.

use super::select::{File, Problem, Step};

/// A request run because another needs it: `(needed, by, the reference)`.
pub(crate) struct Added {
    pub(crate) needed: String,
    pub(crate) by: String,
    pub(crate) reference: String,
}

/// `steps` (a selection) with the requests they need inserted before them, each once;
/// the notes saying why. A cycle is a usage error naming it.
pub(crate) fn with_dependencies(files: &[File], steps: Vec<Step>) -> Result<(Vec<Step>, Vec<Added>), Problem> {
    let mut planned: Vec<Step> = Vec::with_capacity(steps.len());
    let mut added = Vec::new();
    for step in steps {
        let mut visiting = Vec::new();
        visit(files, step, &mut planned, &mut added, &mut visiting)?;
    }
    Ok((planned, added))
}

fn visit(
    files: &[File],
    step: Step,
    planned: &mut Vec<Step>,
    added: &mut Vec<Added>,
    visiting: &mut Vec<Step>,
) -> Result<(), Problem> {
    if planned.contains(&step) {
        return Ok(());
    }
    let Some(request) = files[step.file].document.requests().nth(step.request) else { return Ok(()) };
    if let Some(start) = visiting.iter().position(|visited| *visited == step) {
        let names: Vec<String> =
            visiting[start..].iter().chain(std::iter::once(&step)).map(|step| title(files, step)).collect();
        return Err(Problem::usage(
            format!("the requests need each other's responses: {}", names.join(" → ")),
            Some("one of them must not read the other's response"),
        ));
    }
    visiting.push(step.clone());
    for (name, reference) in files[step.file].document.responses_read_by(request) {
        let Some(dependency) = find(files, step.file, &name) else { continue };
        if dependency == step || planned.contains(&dependency) {
            continue;
        }
        visit(files, dependency, planned, added, visiting)?;
        added.push(Added { needed: name, by: title(files, &step), reference });
    }
    visiting.pop();
    planned.push(step);
    Ok(())
}

/// The request named `name`: the one of `file`, else of the first file that has one.
fn find(files: &[File], file: usize, name: &str) -> Option<Step> {
    std::iter::once(file)
        .chain((0..files.len()).filter(|other| *other != file))
        .find_map(|number| files[number].document.request_named(name).map(|request| Step::of(number, request.index)))
}

/// The name, else the request line's place.
fn title(files: &[File], step: &Step) -> String {
    let file = &files[step.file];
    match file.document.requests().nth(step.request) {
        Some(request) => match &request.name {
            Some(name) => format!("`{}`", name.value),
            None => format!("{}:{}", file.shown, request.line_span.start_position.line + 1),
        },
        None => file.shown.clone(),
    }
}
