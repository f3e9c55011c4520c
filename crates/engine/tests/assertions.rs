//! `# @assert` directives evaluated on real responses.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

mod support;

use support::client;
use volley_engine::{Outcome, RunOptions};
use volley_test_support::TestServer;

#[tokio::test]
async fn every_assertion_of_a_request_is_evaluated_in_order() {
    let server = TestServer::start().await;
    let text = format!(
        "@expected = 200\n\
         # @assert status == {{{{expected}}}}\n\
         # @assert header Content-Type contains json\n\
         # @assert body contains \"POST\"\n\
         # @assert jsonpath $.method == \"POST\"\n\
         # @assert jsonpath $.missing exists\n\
         # @assert status >= 300\n\
         POST {}\n\
         Content-Type: text/plain\n\
         \n\
         hello\n",
        server.url("/echo")
    );
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    let outcomes: Vec<_> =
        response.assertions().iter().map(|result| (result.expression.as_str(), &result.outcome)).collect();
    assert_eq!(outcomes.len(), 6);
    assert_eq!(outcomes[0], ("status == 200", &Outcome::Passed), "variables are substituted first");
    assert!(outcomes[1..4].iter().all(|(_, outcome)| **outcome == Outcome::Passed), "{outcomes:?}");
    assert!(matches!(outcomes[4].1, Outcome::Failed { actual, .. } if actual == "nothing matches"));
    assert_eq!(outcomes[5].1, &Outcome::Failed { expected: "status >= 300".to_owned(), actual: "200".to_owned() });
    assert!(!response.assertions_passed());
    // The span is the directive's value: line 7 (0-based 6), after `# @assert `.
    let last = &response.assertions()[5];
    assert_eq!((last.span.start_position.line, last.span.start_position.column), (6, 10));
}

#[tokio::test]
async fn invalid_assertions_do_not_stop_the_request() {
    let server = TestServer::start().await;
    let text = format!(
        "# @assert status = 200\n\
         # @assert header X-Id == {{{{nowhere}}}}\n\
         GET {}\n",
        server.url("/echo")
    );
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 200);
    let [syntax, undefined] = response.assertions() else { panic!("{:?}", response.assertions()) };
    let Outcome::Invalid { message, hint } = &syntax.outcome else { panic!("{syntax:?}") };
    assert_eq!(message, "`=` is not a comparison");
    assert!(hint.as_deref().unwrap().contains("status == 200"));
    assert_eq!(syntax.span.start_position.column, 17, "narrowed to the operator");
    let Outcome::Invalid { message, hint } = &undefined.outcome else { panic!("{undefined:?}") };
    assert_eq!(message, "undefined variable `nowhere`");
    assert!(hint.as_deref().unwrap().contains("--var nowhere=value"));
    assert_eq!(undefined.span.start_position, volley_syntax::Position::new(1, 27), "at the name");
    assert!(!response.assertions_passed());
}
