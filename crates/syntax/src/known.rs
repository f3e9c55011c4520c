//! What a [`Document`](crate::Document) works out about its blocks once and keeps.

/// Facts about a document's blocks, worked out on first use: every request of a file
/// of thousands would otherwise walk them all again. Equal to any other (they follow
/// from the blocks), and copied with the document.
#[derive(Debug, Clone, Default)]
pub struct Known {
    imports: std::sync::OnceLock<bool>,
    global_scripts: std::sync::OnceLock<bool>,
}

impl Known {
    /// Whether the blocks import a file, computed by `compute` the first time.
    pub(crate) fn imports(&self, compute: impl FnOnce() -> bool) -> bool {
        *self.imports.get_or_init(compute)
    }

    /// Whether a block without a request has scripts, computed by `compute` the first time.
    pub(crate) fn global_scripts(&self, compute: impl FnOnce() -> bool) -> bool {
        *self.global_scripts.get_or_init(compute)
    }
}

impl PartialEq for Known {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Known {}
