//! `# @assert` directives evaluated on real responses.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use support::client;
use volley_echo_server::TestServer;
use volley_engine::RunOptions;
use volley_engine::assert::Outcome;

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

/// `text` with its `# @assert` lines written as httpyac's `?? …` lines after the
/// request (after a blank line when the request has a body), parsed.
fn as_httpyac(text: &str) -> (volley_syntax::Document, String) {
    let (assertions, rest): (Vec<&str>, Vec<&str>) = text.lines().partition(|line| line.starts_with("# @assert "));
    let mut httpyac = rest.join("\n");
    httpyac.push('\n');
    for assertion in assertions {
        httpyac.push_str("?? ");
        httpyac.push_str(&assertion["# @assert ".len()..]);
        httpyac.push('\n');
    }
    let document = volley_syntax::parse(&httpyac);
    let request = document.requests().next().unwrap();
    assert!(request.directives.iter().all(|directive| directive.name.value == "??"), "{httpyac}");
    (document, httpyac)
}

async fn run_httpyac(text: &str) -> volley_engine::Response {
    let (document, _) = as_httpyac(text);
    let request = document.requests().next().unwrap();
    volley_engine::stages::run_request(&client(), &document, request, None, RunOptions::default()).await.unwrap()
}

fn outcomes(response: &volley_engine::Response) -> Vec<(&str, &Outcome)> {
    response.assertions().iter().map(|result| (result.expression.as_str(), &result.outcome)).collect()
}

#[tokio::test]
async fn httpyac_lines_that_pass_make_a_passing_request() {
    let server = TestServer::start().await;
    let text = format!(
        "# @assert status == 200\n\
         # @assert status startsWith 2\n\
         # @assert header content-type includes json\n\
         # @assert header content-length isString\n\
         # @assert body includes \"hello\"\n\
         # @assert body method == POST\n\
         # @assert body body_len == 5\n\
         # @assert body body_len > 4\n\
         # @assert body headers isArray\n\
         # @assert body headers.length >= 1\n\
         # @assert body query isFalse\n\
         # @assert body path exists\n\
         # @assert body path matches ^/echo$\n\
         # @assert body body_base64 == aGVsbG8=\n\
         # @assert body body sha256 LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=\n\
         # @assert body body md5 5d41402abc4b2a76b9719d911017c592\n\
         # @assert duration < 60000\n\
         # @assert duration firstByte <= 60000\n\
         POST {}\n\
         Content-Type: text/plain\n\
         \n\
         hello\n",
        server.url("/echo")
    );
    let response = run_httpyac(&text).await;
    let outcomes = outcomes(&response);
    assert_eq!(outcomes.len(), 18);
    assert!(outcomes.iter().all(|(_, outcome)| **outcome == Outcome::Passed), "{outcomes:#?}");
    assert!(response.assertions_passed(), "as good as passing `@assert`s");
}

#[tokio::test]
async fn httpyac_failures_say_expected_and_actual_and_refusals_are_invalid() {
    let server = TestServer::start().await;
    let text = format!(
        "# @assert status == 201\n\
         # @assert header x-request-id exists\n\
         # @assert body method == \"POST\"\n\
         # @assert body missing exists\n\
         # @assert js response.parsedBody.method == POST\n\
         # @assert xpath /a/@b == c\n\
         # @assert body == {{{{expected}}}}\n\
         POST {}\n",
        server.url("/echo")
    );
    let response = run_httpyac(&format!("@expected = {{\"nope\": 1}}\n{text}")).await;
    assert_eq!(response.status(), 200, "invalid assertions do not stop the request");
    let outcomes = outcomes(&response);
    let failed =
        |expected: &str, actual: &str| Outcome::Failed { expected: expected.to_owned(), actual: actual.to_owned() };
    assert_eq!(outcomes[0], ("status == 201", &failed("status == 201", "200")));
    assert_eq!(outcomes[1].1, &failed("`x-request-id` to be truthy", "no such header"));
    assert_eq!(outcomes[2].1, &failed("body `method` == \"POST\"", "\"POST\""), "the quotes are part of the value");
    assert_eq!(outcomes[3].1, &failed("body `missing` to be truthy", "nothing matches"));
    assert_eq!(outcomes[4].1, &Outcome::Passed, "`js` evaluates its expression on the response");
    let Outcome::Invalid { message, .. } = outcomes[5].1 else { panic!("{outcomes:?}") };
    assert_eq!(message, "httpyac `xpath` assertions are not supported");
    assert_eq!(outcomes[6].0, "body == {\"nope\": 1}", "variables are substituted first");
    assert!(matches!(outcomes[6].1, Outcome::Failed { expected, .. } if expected == "body == {\"nope\": 1}"));
    assert!(!response.assertions_passed());
}

#[tokio::test]
async fn duration_is_the_time_the_exchange_took() {
    let server = TestServer::start().await;
    let text = format!(
        "# @assert duration >= 150\n\
         # @assert duration < 150\n\
         # @assert duration firstByte >= 150\n\
         GET {}\n",
        server.url("/slow?ms=150")
    );
    let response = run_httpyac(&text).await;
    let outcomes = outcomes(&response);
    assert_eq!(outcomes[0].1, &Outcome::Passed);
    let Outcome::Failed { expected, actual } = outcomes[1].1 else { panic!("{outcomes:?}") };
    assert_eq!(expected, "duration < 150 ms");
    let milliseconds: u64 = actual.strip_suffix(" ms").unwrap().parse().unwrap();
    assert!(milliseconds >= 150, "{actual}");
    assert_eq!(outcomes[2].1, &Outcome::Passed, "the server answers after 150 ms");
    // The same field in `# @assert`.
    let text = format!("# @assert duration >= 150\nGET {}\n", server.url("/slow?ms=150"));
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    assert!(response.assertions_passed(), "{:?}", response.assertions());
}

#[tokio::test]
async fn at_assert_takes_the_new_operators_too() {
    let server = TestServer::start().await;
    let text = format!(
        "# @assert status matches ^2\\d\\d$\n\
         # @assert header Content-Type startsWith application/\n\
         # @assert body matches \"\\\"method\\\":\\s*\\\"PUT\\\"\"\n\
         # @assert jsonpath $.body_len > 2\n\
         # @assert jsonpath $.headers isArray\n\
         # @assert jsonpath $.query isFalse\n\
         # @assert jsonpath $.body == abc\n\
         # @assert jsonpath $.body_len < 3\n\
         PUT {}\n\
         \n\
         abc\n",
        server.url("/echo")
    );
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    let outcomes = outcomes(&response);
    assert!(outcomes[..7].iter().all(|(_, outcome)| **outcome == Outcome::Passed), "{outcomes:#?}");
    assert_eq!(outcomes[7].1, &Outcome::Failed { expected: "`$.body_len` < 3".to_owned(), actual: "3".to_owned() });
}
