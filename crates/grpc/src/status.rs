//! The status of a call (`grpc-status`, `grpc-message`): its code by name and number.

use percent_encoding::percent_decode_str;

/// gRPC's status codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// 0.
    Ok,
    /// 1.
    Cancelled,
    /// 2, and any number gRPC does not define.
    Unknown,
    /// 3.
    InvalidArgument,
    /// 4.
    DeadlineExceeded,
    /// 5.
    NotFound,
    /// 6.
    AlreadyExists,
    /// 7.
    PermissionDenied,
    /// 8.
    ResourceExhausted,
    /// 9.
    FailedPrecondition,
    /// 10.
    Aborted,
    /// 11.
    OutOfRange,
    /// 12.
    Unimplemented,
    /// 13.
    Internal,
    /// 14.
    Unavailable,
    /// 15.
    DataLoss,
    /// 16.
    Unauthenticated,
}

const CODES: [(Code, &str); 17] = [
    (Code::Ok, "OK"),
    (Code::Cancelled, "CANCELLED"),
    (Code::Unknown, "UNKNOWN"),
    (Code::InvalidArgument, "INVALID_ARGUMENT"),
    (Code::DeadlineExceeded, "DEADLINE_EXCEEDED"),
    (Code::NotFound, "NOT_FOUND"),
    (Code::AlreadyExists, "ALREADY_EXISTS"),
    (Code::PermissionDenied, "PERMISSION_DENIED"),
    (Code::ResourceExhausted, "RESOURCE_EXHAUSTED"),
    (Code::FailedPrecondition, "FAILED_PRECONDITION"),
    (Code::Aborted, "ABORTED"),
    (Code::OutOfRange, "OUT_OF_RANGE"),
    (Code::Unimplemented, "UNIMPLEMENTED"),
    (Code::Internal, "INTERNAL"),
    (Code::Unavailable, "UNAVAILABLE"),
    (Code::DataLoss, "DATA_LOSS"),
    (Code::Unauthenticated, "UNAUTHENTICATED"),
];

impl Code {
    /// The code of `number`; numbers gRPC does not define are `UNKNOWN`.
    #[must_use]
    pub fn from_number(number: u32) -> Self {
        usize::try_from(number).ok().and_then(|index| CODES.get(index)).map_or(Self::Unknown, |(code, _)| *code)
    }

    /// Its number.
    #[must_use]
    pub fn number(self) -> u32 {
        CODES.iter().position(|(code, _)| *code == self).and_then(|index| u32::try_from(index).ok()).unwrap_or(2)
    }

    /// Its name, as gRPC writes it: `INVALID_ARGUMENT`.
    #[must_use]
    pub fn name(self) -> &'static str {
        CODES.iter().find(|(code, _)| *code == self).map_or("UNKNOWN", |(_, name)| name)
    }
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The code.
    pub code: Code,
    /// The number as the server sent it (a number gRPC does not define is kept here).
    pub number: u32,
    /// `grpc-message`, percent-decoded; empty when the server sent none.
    pub message: String,
}

impl Status {
    /// The status of `grpc-status` and `grpc-message` values; `None` without a status.
    #[must_use]
    pub fn from_fields(status: Option<&str>, message: Option<&str>) -> Option<Self> {
        let number: u32 = status?.trim().parse().ok()?;
        let message = message.map(|text| percent_decode_str(text).decode_utf8_lossy().into_owned()).unwrap_or_default();
        Some(Self { code: Code::from_number(number), number, message })
    }

    /// The call succeeded: `OK`.
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.code == Code::Ok
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.code.name(), self.number)?;
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Code, Status};

    #[test]
    fn codes_have_their_names_and_numbers() {
        assert_eq!(Code::from_number(3), Code::InvalidArgument);
        assert_eq!((Code::InvalidArgument.name(), Code::InvalidArgument.number()), ("INVALID_ARGUMENT", 3));
        assert_eq!(Code::from_number(16).name(), "UNAUTHENTICATED");
        let odd = Status::from_fields(Some("42"), None).expect("a status");
        assert_eq!((odd.code, odd.number), (Code::Unknown, 42));
        let status = Status::from_fields(Some("3"), Some("no%20such%20item")).expect("a status");
        assert_eq!(status.to_string(), "INVALID_ARGUMENT (3): no such item");
        assert!(Status::from_fields(None, Some("x")).is_none());
    }
}
