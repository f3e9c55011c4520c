//! `stages::prepare_ahead`: a request is prepared while the one before it is under way
//! only when preparing it cannot act (scripts, prompts, custom and command resolvers,
//! tokens, requests run first), reads no named response and takes no value of the time;
//! `transmit` and `finish` are `send` in two halves.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support;
use volley_echo_server::TestServer;
use volley_engine::resolvers::resolver;
use volley_engine::{Client, ClientConfig, RunOptions, stages};

async fn ahead(client: &Client, text: &str) -> Option<stages::PreparedRequest> {
    let document = volley_syntax::parse(text);
    let request = document.requests().last().expect("a request");
    stages::prepare_ahead(client, &document, request, None, &RunOptions::default()).await
}

#[tokio::test]
async fn only_a_request_whose_preparation_cannot_act_is_prepared_ahead() {
    let server = TestServer::start().await;
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let count = resolver(move |_| Ok(counted.fetch_add(1, Ordering::Relaxed).to_string()));
    let client =
        Client::new(ClientConfig { resolvers: HashMap::from([("$count".to_owned(), count)]), ..support::config() });
    let base = server.base_url();
    // Variables, built-in resolvers, headers and assertions: prepared as in its turn.
    let plain = format!(
        "@host = {base}\n# @assert status == 200\nGET {{{{host}}}}/echo?id={{{{$uuid}}}}\nX-Pick: {{{{$randomInt 1 9}}}}\n"
    );
    let prepared = ahead(&client, &plain).await.expect("a plain request is prepared ahead");
    assert!(prepared.url.as_str().starts_with(&format!("{base}/echo?id=")), "{}", prepared.url);
    assert_eq!(prepared.assertions.len(), 1);
    let refused = [
        // A named response, and httpyac's name standing for its body.
        format!("GET {base}/echo?x={{{{first.response.body.$.id}}}}\n"),
        format!("GET {base}/echo?x={{{{first.id}}}}\n"),
        // Also where an error is kept rather than returned: an assertion's value.
        format!("# @assert status == {{{{first.response.status}}}}\nGET {base}/echo\n"),
        format!("# @assert status == {{{{ 100 + 100 }}}}\nGET {base}/echo\n"),
        // Prompts: a `# @prompt` line and a prompting resolver.
        format!("# @prompt name\nGET {base}/echo?n={{{{name}}}}\n"),
        format!("GET {base}/echo?n={{{{$input Name}}}}\n"),
        // Requests run first: `@ref` and `run` lines.
        format!("# @name first\nGET {base}/echo\n\n###\n# @ref first\nGET {base}/echo?second\n"),
        format!("# @name first\nGET {base}/echo\n\n###\nrun #first\nGET {base}/echo?second\n"),
        // Scripts before and after the request, and JavaScript in `{{ }}`.
        format!("< {{% request.variables.set(\"x\", \"1\"); %}}\nGET {base}/echo?x={{{{x}}}}\n"),
        format!("GET {base}/echo\n\n> {{% client.global.set(\"x\", \"1\"); %}}\n"),
        format!("GET {base}/echo?sum={{{{ 1 + 1 }}}}\n"),
        // The time, taken when the request is sent: the clock's values and AWS signatures.
        format!("GET {base}/echo\nX-At: {{{{$timestamp}}}}\n"),
        format!("GET {base}/echo\nX-At: {{{{$datetime iso8601}}}}\n"),
        format!("GET {base}/echo\nAuthorization: AWS AKIDEXAMPLE wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY\n"),
        // A custom resolver (its calls are counted) and OAuth 2.0 tokens.
        format!("GET {base}/echo?n={{{{$count}}}}\n"),
        format!("GET {base}/echo\nAuthorization: Bearer {{{{$auth.token(\"api\")}}}}\n"),
    ];
    for text in &refused {
        assert!(ahead(&client, text).await.is_none(), "prepared ahead:\n{text}");
    }
    assert_eq!(calls.load(Ordering::Relaxed), 0, "a custom resolver ran ahead of its turn");
    // In its turn the custom resolver runs, once.
    assert!(client.run_string(&refused[14], RunOptions::default()).await.is_ok());
    assert_eq!(calls.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn transmit_then_finish_is_send() {
    let server = TestServer::start().await;
    let client = support::client();
    let base = server.base_url();
    let text = format!(
        "# @name first\n# @assert status == 200\nGET {base}/echo?one\n\n> {{% client.global.set(\"seen\", \
         response.body.query); %}}\n\n###\nGET {base}/echo?two\n"
    );
    let document = volley_syntax::parse(&text);
    let requests: Vec<_> = document.requests().collect();
    let options = RunOptions::default();
    let prepared = stages::prepare_request(&client, &document, requests[0], None, &options).await.unwrap();
    let exchanged = stages::transmit(&client, prepared, None).await.unwrap();
    // Read, not yet checked or kept: its handler writes a variable when it finishes.
    assert_eq!(exchanged.response().status(), 200);
    assert!(exchanged.response().assertions.is_empty());
    assert!(exchanged.finish_writes());
    assert!(stages::chained_response(&client, "first").is_none());
    let response = stages::finish(&client, exchanged);
    assert_eq!(response.assertions.len(), 1);
    assert!(
        response.assertions.iter().all(volley_engine::assert::AssertionResult::passed),
        "{:?}",
        response.assertions
    );
    assert_eq!(stages::chained_response(&client, "first").map(|stored| stored.status), Some(200));
    assert_eq!(stages::variables(&client).get("seen").and_then(|value| value.as_str()), Some("one"));
    // A request without handlers or `>>` lines writes nothing a later preparation reads.
    let prepared = stages::prepare_request(&client, &document, requests[1], None, &options).await.unwrap();
    let exchanged = stages::transmit(&client, prepared, None).await.unwrap();
    assert!(!exchanged.finish_writes());
}
