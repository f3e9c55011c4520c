//! The names over a whole document that the analysis of every part reads (file
//! variables, request names, what scripts set) and the request names given twice, kept
//! with a version's model and shared with the next while its edits leave them alone:
//! a keystroke in a large file does not go over every name.

use std::collections::BTreeSet;

use crate::documents::{Outline, Placed};

/// The names of a whole file that the analysis of every part reads, and the request
/// names given twice: made when a model is made from scratch or an edit changes a name,
/// else kept from the version before (a keystroke does not go over every name of a
/// large file).
#[derive(Debug, Default)]
pub(crate) struct FileNames {
    /// The names of the file variables.
    pub(crate) variables: BTreeSet<String>,
    /// The request names.
    pub(crate) requests: BTreeSet<String>,
    /// The request names given to more than one request.
    pub(crate) duplicated: BTreeSet<String>,
    /// What the scripts of every part may set (their script files not read).
    pub(crate) script_variables: volley_engine::analysis::ScriptVariables,
}

impl FileNames {
    pub(crate) fn of(parts: &[Placed]) -> FileNames {
        let mut names = FileNames::default();
        for placed in parts {
            let outline = &placed.part.outline;
            names.variables.extend(outline.variables.iter().map(|declaration| declaration.name.value.clone()));
            for name in outline.requests().filter_map(|request| request.name.as_ref()) {
                if !names.requests.insert(name.value.clone()) {
                    names.duplicated.insert(name.value.clone());
                }
            }
            names.script_variables.extend(&outline.script_variables);
        }
        names
    }

    /// `true` when parts with the outlines `made` have the names of the parts with the
    /// outlines `replaced`, in the same order: the names of a file where they replace
    /// them stay the same.
    pub(crate) fn same(replaced: &[&Outline], made: &[&Outline]) -> bool {
        fn variables<'a>(outlines: &'a [&'a Outline]) -> impl Iterator<Item = &'a str> {
            outlines
                .iter()
                .flat_map(|outline| outline.variables.iter().map(|declaration| declaration.name.value.as_str()))
        }
        fn requests<'a>(outlines: &'a [&'a Outline]) -> impl Iterator<Item = &'a str> {
            outlines.iter().flat_map(|outline| {
                outline.requests().filter_map(|request| request.name.as_ref().map(|name| name.value.as_str()))
            })
        }
        fn scripts(outlines: &[&Outline]) -> volley_engine::analysis::ScriptVariables {
            let mut all = volley_engine::analysis::ScriptVariables::default();
            for outline in outlines {
                all.extend(&outline.script_variables);
            }
            all
        }
        variables(replaced).eq(variables(made))
            && requests(replaced).eq(requests(made))
            && scripts(replaced) == scripts(made)
    }
}
