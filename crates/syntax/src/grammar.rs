//! The grammar's runtime: the tree-sitter language of `.http` files, one parser per
//! thread (within the parse budget when one is set), and the ids of the node kinds the
//! typed layer reads.

use std::cell::RefCell;
use std::sync::LazyLock;

use tree_sitter::{Language, Parser, Tree};

/// The tree-sitter language of `.http` files.
#[must_use]
pub fn language() -> Language {
    tree_sitter_volley_http::LANGUAGE.into()
}

thread_local! {
    // A parser is cheap to keep and costly to create; one per thread, reused.
    static PARSER: RefCell<Parser> = RefCell::new(new_parser());
}

fn new_parser() -> Parser {
    let mut parser = Parser::new();
    parser.set_language(&language()).expect("the generated grammar and the runtime share an ABI version");
    parser
}

pub(crate) fn parse_tree(text: &str, old: Option<&Tree>) -> Tree {
    PARSER.with(|parser| {
        let mut parser = parser.borrow_mut();
        if !crate::budget::is_active() {
            return parser.parse(text, old).expect("parsing cannot fail: the language is set and nothing cancels it");
        }
        // Within a budget ([`crate::parse_within`]) the parse stops when it is exceeded; the
        // empty tree then stands in, and the caller throws the whole result away.
        let bytes = text.as_bytes();
        let mut progress = |_: &tree_sitter::ParseState| crate::budget::progress();
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
        let tree = parser.parse_with_options(
            &mut |offset: usize, _: tree_sitter::Point| bytes.get(offset..).unwrap_or_default(),
            old,
            Some(options),
        );
        tree.unwrap_or_else(|| {
            parser.reset();
            parser.parse("", None).expect("an empty text parses")
        })
    })
}

/// The kind ids of the grammar's nodes, looked up once so that the typed layer
/// compares integers instead of strings.
#[derive(Debug)]
pub(crate) struct Kinds {
    pub(crate) argument: u16,
    pub(crate) arguments: u16,
    pub(crate) assertion: u16,
    pub(crate) block: u16,
    pub(crate) command: u16,
    pub(crate) graphql_fragment: u16,
    pub(crate) js_block: u16,
    pub(crate) response_line: u16,
    pub(crate) script_file: u16,
    pub(crate) body: u16,
    pub(crate) directive: u16,
    pub(crate) file_reference: u16,
    pub(crate) form_field: u16,
    pub(crate) header: u16,
    pub(crate) http_version: u16,
    pub(crate) json_array: u16,
    pub(crate) junk: u16,
    pub(crate) method: u16,
    pub(crate) output_redirect: u16,
    pub(crate) query_continuation: u16,
    pub(crate) request: u16,
    pub(crate) request_line: u16,
    pub(crate) resolver: u16,
    pub(crate) resolver_name: u16,
    pub(crate) response_reference: u16,
    pub(crate) script: u16,
    pub(crate) unclosed_script: u16,
    pub(crate) separator: u16,
    pub(crate) string: u16,
    pub(crate) url: u16,
    pub(crate) value: u16,
    pub(crate) variable: u16,
    pub(crate) variable_declaration: u16,
    pub(crate) variable_name: u16,
    pub(crate) close_braces: u16,
    pub(crate) field_name: u16,
    pub(crate) field_value: u16,
    pub(crate) field_path: u16,
    pub(crate) field_file: u16,
    pub(crate) field_filename: u16,
    pub(crate) file_reference_substitute: u16,
}

pub(crate) static KINDS: LazyLock<Kinds> = LazyLock::new(|| {
    let language = language();
    let named = |name: &str| {
        let id = language.id_for_node_kind(name, true);
        assert_ne!(id, 0, "node kind `{name}` is missing from the grammar");
        id
    };
    let anonymous = |name: &str| {
        let id = language.id_for_node_kind(name, false);
        assert_ne!(id, 0, "token `{name}` is missing from the grammar");
        id
    };
    let field = |name: &str| {
        let id = language.field_id_for_name(name);
        id.unwrap_or_else(|| panic!("field `{name}` is missing from the grammar")).get()
    };
    Kinds {
        argument: named("argument"),
        arguments: named("arguments"),
        assertion: named("assertion"),
        block: named("block"),
        command: named("command"),
        graphql_fragment: named("graphql_fragment"),
        js_block: named("js_block"),
        response_line: named("response_line"),
        script_file: named("script_file"),
        body: named("body"),
        directive: named("directive"),
        file_reference: named("file_reference"),
        form_field: named("form_field"),
        header: named("header"),
        http_version: named("http_version"),
        json_array: named("json_array"),
        junk: named("junk"),
        method: named("method"),
        output_redirect: named("output_redirect"),
        query_continuation: named("query_continuation"),
        request: named("request"),
        request_line: named("request_line"),
        resolver: named("resolver"),
        resolver_name: named("resolver_name"),
        response_reference: named("response_reference"),
        script: named("script"),
        unclosed_script: named("unclosed_script"),
        separator: named("separator"),
        string: named("string"),
        url: named("url"),
        value: named("value"),
        variable: named("variable"),
        variable_declaration: named("variable_declaration"),
        variable_name: named("variable_name"),
        close_braces: anonymous("}}"),
        field_name: field("name"),
        field_value: field("value"),
        field_path: field("path"),
        field_file: field("file"),
        field_filename: field("filename"),
        file_reference_substitute: anonymous("<@"),
    }
});
