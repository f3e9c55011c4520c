//! Where a `GRPC` request line sends: `host:port/package.Service/Method` (JetBrains,
//! httpyac), with `grpc://`, `grpcs://`, `http://` or `https://` before it (httpyac), or
//! `host:port package.Service/Method` (Kulala, as grpcurl writes it).

/// The server and the method of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `host:port`.
    pub authority: String,
    /// `Some(true)` for `grpcs://`/`https://`, `Some(false)` for `grpc://`/`http://`;
    /// `None` when the line does not say (each tool has its default).
    pub tls: Option<bool>,
    /// Written grpcurl's way (`host:port package.Service/Method`): Kulala's form, whose
    /// default is TLS unless `# @grpc-plaintext`.
    pub grpcurl_form: bool,
    /// The fully qualified service: `package.Service`.
    pub service: String,
    /// The method's name.
    pub method: String,
}

/// Why a target cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// No `host:port` before the method.
    #[error("no host and port before the method: write `host:port/package.Service/Method`")]
    NoAuthority,
    /// The method part is not `package.Service/Method`.
    #[error("`{0}` is not a method: write it as `package.Service/Method`")]
    NoMethod(String),
    /// A scheme that is not gRPC's or HTTP's.
    #[error("the scheme `{0}` is not grpc, grpcs, http or https")]
    Scheme(String),
}

impl Target {
    /// Reads a target as written after `GRPC` (variables already replaced).
    pub fn parse(text: &str) -> Result<Self, TargetError> {
        let text = text.trim();
        let (tls, rest) = match text.split_once("://") {
            Some((scheme, rest)) => match scheme.to_ascii_lowercase().as_str() {
                "grpc" | "http" => (Some(false), rest),
                "grpcs" | "https" => (Some(true), rest),
                _ => return Err(TargetError::Scheme(scheme.to_owned())),
            },
            None => (None, text),
        };
        let (authority, path, grpcurl_form) = match rest.split_once(char::is_whitespace) {
            Some((authority, path)) => (authority, path.trim(), true),
            None => match rest.split_once('/') {
                Some((authority, path)) => (authority, path, false),
                None => return Err(TargetError::NoMethod(rest.to_owned())),
            },
        };
        if authority.is_empty() {
            return Err(TargetError::NoAuthority);
        }
        let path = path.trim_matches('/');
        let (service, method) = path.rsplit_once('/').ok_or_else(|| TargetError::NoMethod(path.to_owned()))?;
        if service.is_empty() || method.is_empty() || method.contains('/') {
            return Err(TargetError::NoMethod(path.to_owned()));
        }
        Ok(Self {
            authority: authority.to_owned(),
            tls,
            grpcurl_form,
            service: service.to_owned(),
            method: method.to_owned(),
        })
    }

    /// The path of the call's HTTP/2 request: `/package.Service/Method`.
    #[must_use]
    pub fn path(&self) -> String {
        format!("/{}/{}", self.service, self.method)
    }
}

#[cfg(test)]
mod tests {
    use super::{Target, TargetError};

    #[test]
    fn the_three_tools_forms_are_read() {
        let jetbrains = Target::parse("localhost:50051/shop.v1.Orders/Place").expect("JetBrains");
        assert_eq!(
            (jetbrains.authority.as_str(), jetbrains.service.as_str(), jetbrains.method.as_str(), jetbrains.tls),
            ("localhost:50051", "shop.v1.Orders", "Place", None)
        );
        assert!(!jetbrains.grpcurl_form);
        assert_eq!(jetbrains.path(), "/shop.v1.Orders/Place");
        let httpyac = Target::parse("grpcs://api.example.com:443/shop.v1.Orders/List").expect("httpyac");
        assert_eq!((httpyac.tls, httpyac.authority.as_str()), (Some(true), "api.example.com:443"));
        assert_eq!(Target::parse("grpc://h:1/s.S/M").expect("plaintext").tls, Some(false));
        let kulala = Target::parse("localhost:8080 grpc_echo.v1.EchoService/Echo").expect("Kulala");
        assert!(kulala.grpcurl_form);
        assert_eq!((kulala.service.as_str(), kulala.method.as_str()), ("grpc_echo.v1.EchoService", "Echo"));
    }

    #[test]
    fn what_is_missing_is_said() {
        assert_eq!(Target::parse("localhost:1"), Err(TargetError::NoMethod("localhost:1".to_owned())));
        assert_eq!(Target::parse("/shop.Orders/Place"), Err(TargetError::NoAuthority));
        assert_eq!(Target::parse("h:1/shop.Orders"), Err(TargetError::NoMethod("shop.Orders".to_owned())));
        assert_eq!(Target::parse("ftp://h:1/s.S/M"), Err(TargetError::Scheme("ftp".to_owned())));
    }
}
