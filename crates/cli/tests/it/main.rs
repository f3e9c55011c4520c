//! The integration tests of `volley-cli` in one binary (dependencies linked once), a module per concern.

mod allocator;
mod cli_cases;
mod cluster;
mod completion;
mod convert;
mod examples;
mod grpc;
mod layers;
mod load;
mod lsp;
mod lsp_remote;
mod modules;
mod oauth;
mod overlap;
mod relocations;
mod reports;
mod run_output;
mod run_remote_scripts;
mod serve;
mod suites;
mod support;
mod verdict;
mod watch;
