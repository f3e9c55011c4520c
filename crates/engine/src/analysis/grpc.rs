//! The analysis of a gRPC request: what its run would refuse, found before: a target
//! that is not a method, httpyac's `channelCredentials` header, schema files that are
//! missing, messages that are not JSON.

use volley_syntax::{Body, Code, Diagnostic, GrpcOptions, Listing, Request};

use super::Walker;

impl Walker<'_> {
    pub(super) fn grpc(&self, request: &Request, options: &GrpcOptions, out: &mut Listing) {
        target(request, out);
        for header in request.headers.iter().filter(|header| header.is_named(crate::build::CHANNEL_CREDENTIALS)) {
            let refused = crate::build::channel_credentials(header.span);
            out.push(
                Diagnostic::new(Code::UnsupportedAuth, header.span, refused.message())
                    .with_hint(refused.hint().unwrap_or_default()),
            );
        }
        for file in options.protos.iter().chain(&options.protoset) {
            self.template(file, out);
            self.file(file, out);
        }
        for template in options.import_paths.iter().chain(&options.reflection_server) {
            self.template(template, out);
        }
        for import in self.document.proto_imports_of(request) {
            if !import.path.value.contains("{{") {
                self.file_at(&import.path.value, import.path.span, out, true);
            }
        }
        // Each message is a JSON text.
        if let Body::Inline(template) = &request.body {
            for message in volley_syntax::split_messages(template).iter().filter(|message| !message.is_blank()) {
                self.json_body(&message.body, out);
            }
        }
    }
}

/// A target written out that no run can call (`GRPC localhost:50051` without a method).
fn target(request: &Request, out: &mut Listing) {
    let Some(written) = request.url.as_literal() else { return };
    let written = written.trim();
    if written.starts_with('/') {
        return; // After the variable `host`.
    }
    if let Err(error) = volley_grpc::Target::parse(written) {
        out.push(
            Diagnostic::new(Code::InvalidGrpc, request.url.span, error.to_string())
                .with_hint(crate::build::GRPC_TARGET_HINT),
        );
    }
}
