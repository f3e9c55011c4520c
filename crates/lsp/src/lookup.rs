//! The server's side of navigation (go to definition, references, rename): the
//! symbol under the cursor in a snapshot, and where a variable is declared in the
//! `volley.jsonc` that applies. What a symbol is and where it occurs in a document is
//! `navigation.rs`'s.

use std::sync::Arc;

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{Location, Position, Uri};

use crate::backend::{Backend, document_of};
use crate::model::Snapshot;
use crate::{convert, jsonc, navigation};

impl Backend {
    /// The symbol under `position` with the snapshot and document it was found in.
    pub(crate) async fn symbol_at(
        &self,
        uri: &Uri,
        position: Position,
    ) -> Result<Option<(Snapshot, Arc<volley_syntax::Document>, navigation::Symbol, std::ops::Range<usize>)>> {
        let Some(snapshot) = self.documents.snapshot(uri).await else {
            return Ok(None);
        };
        let document = document_of(&snapshot).await?;
        let offset = convert::offset(&snapshot.rope, position);
        let found = navigation::symbol_at(&document, offset);
        Ok(found.map(|(symbol, range)| (snapshot, document, symbol, range)))
    }

    pub(crate) fn locations(uri: &Uri, snapshot: &Snapshot, ranges: Vec<std::ops::Range<usize>>) -> Vec<Location> {
        ranges.into_iter().map(|range| convert::location(uri, &snapshot.rope, range)).collect()
    }

    /// Where a variable is declared in the `volley.jsonc` that applies to the snapshot:
    /// the key under `variables` and under each profile's `variables` (the variable's
    /// full name, else its first segment: `{{api.version}}` is under `"api"`).
    pub(crate) fn config_declarations(&self, snapshot: &Snapshot, symbol: &navigation::Symbol) -> Vec<Location> {
        let navigation::Symbol::Variable(name) = symbol else { return Vec::new() };
        let Some(directory) = snapshot.path.as_deref().and_then(std::path::Path::parent) else { return Vec::new() };
        let Ok(Some(config)) = volley_engine::stages::config_for(&self.engine, directory) else { return Vec::new() };
        if !config.path.ends_with("volley.jsonc") {
            return Vec::new();
        }
        let Some(uri) = Uri::from_file_path(&config.path) else { return Vec::new() };
        // The unsaved text when the configuration is open, else the file.
        let text = match self.documents.rope(&uri) {
            Some(open) => open.to_string(),
            None => std::fs::read_to_string(&config.path).unwrap_or_default(),
        };
        let root = name.split('.').next().unwrap_or(name);
        let mut ranges = jsonc::variable_keys(&text, name);
        if ranges.is_empty() && root != name {
            ranges = jsonc::variable_keys(&text, root);
        }
        let rope = ropey::Rope::from_str(&text);
        ranges.into_iter().map(|range| convert::location(&uri, &rope, range)).collect()
    }

    /// Where `symbol` is declared in the files `document` imports (`# @import`, `import`):
    /// their `@name = value` lines and request names.
    pub(crate) fn imported_declarations(
        &self,
        snapshot: &Snapshot,
        document: &volley_syntax::Document,
        symbol: &navigation::Symbol,
    ) -> Vec<Location> {
        if !document.has_imports() {
            return Vec::new();
        }
        let Ok(imports) = volley_engine::stages::imports(&self.engine, document, snapshot.path.as_deref()) else {
            return Vec::new();
        };
        let mut locations = Vec::new();
        for linked in imports {
            let ranges = navigation::declarations(&linked.document, symbol);
            let Some(uri) = Uri::from_file_path(&linked.path).filter(|_| !ranges.is_empty()) else { continue };
            let rope = ropey::Rope::from_str(&linked.text);
            locations.extend(ranges.into_iter().map(|range| convert::location(&uri, &rope, range)));
        }
        locations
    }
}
