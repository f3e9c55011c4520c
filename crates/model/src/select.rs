//! Which request of a document a run picks ([`Selection`]), and the one refusal rule of
//! every front end.

use volley_syntax::{Document, Request};

use crate::error::{Error, SelectionError};

/// Which request of a file to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Selection {
    /// The first request.
    #[default]
    First,
    /// The request with this name (`# @name` or `### Name`).
    Name(String),
    /// The request at this 0-based position.
    Index(usize),
}

impl Selection {
    /// The request of `document` this selection names.
    pub fn find<'a>(&self, document: &'a Document) -> Result<&'a Request, SelectionError> {
        select(document, self)
    }
}

/// The one refusal rule of every front end ([`Document::refusal_of`]): `request` is not
/// sent when it has errors of its own or uses a broken file variable.
#[doc(hidden)]
pub fn refuse(document: &Document, request: &Request) -> Result<(), Error> {
    match document.refusal_of(request) {
        Some(refusal) => Err(Error::Invalid { diagnostics: refusal.into_diagnostics() }),
        None => Ok(()),
    }
}

/// The request a selection names.
#[doc(hidden)]
pub fn select<'a>(document: &'a Document, selection: &Selection) -> Result<&'a Request, SelectionError> {
    let count = document.requests().count();
    if count == 0 {
        return Err(SelectionError::NoRequests);
    }
    match selection {
        Selection::First => document.request(0).ok_or(SelectionError::NoRequests),
        Selection::Index(index) => {
            document.request(*index).ok_or(SelectionError::IndexOutOfRange { index: *index, count })
        }
        Selection::Name(name) => document.request_named(name).ok_or_else(|| {
            let names = document.requests().filter_map(|request| request.name.as_ref().map(|name| name.value.as_str()));
            SelectionError::NameNotFound {
                name: name.clone(),
                suggestion: volley_syntax::closest(name, names).map(str::to_owned),
            }
        }),
    }
}
