//! `GET /event`: the observer stream over Server-Sent Events, filtered by session and
//! flow, with heartbeats; a subscriber that falls behind is told and dropped.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Extension, Query, State};
use axum::response::sse::{Event, Sse};
use futures_util::{Stream, StreamExt as _, stream};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::{Instant, Interval, MissedTickBehavior};
use volley_protocol::ErrorCode;

use crate::auth::Access;
use crate::clock::now_ms;
use crate::error::ApiError;
use crate::hub::ObserverEvent;
use crate::state::AppState;
use crate::wire::ErrorBody;

/// The filters of an observer subscription.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Filters {
    /// Only events of this session.
    pub(crate) session_id: Option<String>,
    /// Only events of this flow.
    pub(crate) flow_id: Option<String>,
}

impl Filters {
    /// The filter rules of every observer stream: under auth a filter is required, and
    /// a scoped token subscribes to its own flow only.
    pub(crate) fn check(&self, access: &Access) -> Result<(), ApiError> {
        if access.auth_enabled() && self.session_id.is_none() && self.flow_id.is_none() {
            return Err(ApiError::validation(
                "with authentication enabled, an observer subscription needs a `sessionId` or `flowId` filter",
            ));
        }
        if let Some(claims) = access.claims()
            && (claims.flow_id.is_none() || claims.flow_id != self.flow_id)
        {
            return Err(ApiError::forbidden("the scoped token may only observe its own flow (`flowId`)"));
        }
        Ok(())
    }

    pub(crate) fn admit(&self, event: &ObserverEvent) -> bool {
        event.matches(self.session_id.as_deref(), self.flow_id.as_deref())
    }
}

/// One query object in the document, with its rule (`openapi.rs`).
impl utoipa::IntoParams for Filters {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        crate::routes::openapi::observer_filters(false)
    }
}

pub(crate) fn query_error(rejection: &QueryRejection) -> ApiError {
    ApiError::validation(rejection.body_text())
}

#[utoipa::path(get, path = "/event", tag = "observers", params(Filters),
    responses((status = 200, description = "`text/event-stream`: `connected`, then, with a `flowId` filter, the flow's retained events (after the seq of a `Last-Event-ID: <flowId>:<seq>` header), then each event as `event: <type>`, `id: <flowId or runId>:<seq>`, `data: <envelope>`; `heartbeat` every 15 s; a last `error` event when the subscriber fell behind", content_type = "text/event-stream"),
        (status = 400, description = "VALIDATION_ERROR: no filter under auth", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub(crate) async fn subscribe(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    headers: http::HeaderMap,
    filters: Result<Query<Filters>, QueryRejection>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let Query(filters) = filters.map_err(|rejection| query_error(&rejection))?;
    filters.check(&access)?;
    // Subscribed before the replay is read: nothing falls between the two. With
    // `--redis`, Redis knows of the subscriber before `connected` is sent: every
    // instance's events from then on are kept for it.
    let receiver = state.hub.listen().await;
    // A client that creates a flow, subscribes to it and executes at once (t-req's TUI
    // does not wait for the stream to open) would miss the first events: the flow's
    // retained events come first, after those a reconnecting client has already seen.
    let mut replayed = Vec::new();
    if let Some(flow) = filters.flow_id.as_deref() {
        let after = headers
            .get("last-event-id")
            .and_then(|value| value.to_str().ok())
            .and_then(|id| id.rsplit_once(':'))
            .filter(|(scope, _)| *scope == flow)
            .and_then(|(_, seq)| seq.parse().ok())
            .unwrap_or(0);
        let (events, _) = state.hub.retained_after(flow, after).await;
        replayed = events.into_iter().filter(|event| filters.admit(event)).collect();
    }
    let replayed_up_to = replayed.last().map_or(0, |event| event.seq);
    let replay = stream::iter(replayed)
        .map(|event| Ok(Event::default().event(event.kind.as_ref()).id(event.sse_id()).data(event.json.as_str())));
    let mut heartbeat = tokio::time::interval_at(Instant::now() + state.config.heartbeat, state.config.heartbeat);
    heartbeat.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let connected = Event::default()
        .event("connected")
        .data(json!({ "sessionId": filters.session_id, "flowId": filters.flow_id, "ts": now_ms() }).to_string());
    let live = stream::unfold(Some((receiver, heartbeat, filters, replayed_up_to)), next_event);
    let stream = stream::once(async { Ok(connected) })
        .chain(replay)
        .chain(live)
        .take_until(state.shutdown.clone().cancelled_owned());
    Ok(Sse::new(stream))
}

/// The receiver, the heartbeat, the filters and the last seq replayed of the flow.
type Subscription = (tokio::sync::broadcast::Receiver<Arc<ObserverEvent>>, Interval, Filters, u64);

async fn next_event(state: Option<Subscription>) -> Option<(Result<Event, Infallible>, Option<Subscription>)> {
    let (mut receiver, mut heartbeat, filters, replayed_up_to) = state?;
    loop {
        tokio::select! {
            next = receiver.recv() => match next {
                Ok(event) if event.missed().is_some() => {
                    let data = lagged(event.missed().unwrap_or(0), "reconnect to continue");
                    return Some((Ok(Event::default().event("error").data(data.to_string())), None));
                }
                // Skipped: flow events the replay already sent.
                Ok(event) if filters.admit(&event) && !(event.flow_id.is_some() && event.seq <= replayed_up_to) => {
                    let out = Event::default().event(event.kind.as_ref()).id(event.sse_id()).data(event.json.as_str());
                    return Some((Ok(out), Some((receiver, heartbeat, filters, replayed_up_to))));
                }
                Ok(_) => {}
                Err(RecvError::Lagged(missed)) => {
                    tracing::info!(missed, "dropped an observer that fell behind");
                    let data = json!({ "error": {
                        "code": ErrorCode::ObserverLagged,
                        "message": format!("this observer fell {missed} events behind and was disconnected; reconnect to continue"),
                    }});
                    return Some((Ok(Event::default().event("error").data(data.to_string())), None));
                }
                Err(RecvError::Closed) => return None,
            },
            _ = heartbeat.tick() => {
                let out = Event::default().event("heartbeat").data(json!({ "ts": now_ms() }).to_string());
                return Some((Ok(out), Some((receiver, heartbeat, filters, replayed_up_to))));
            }
        }
    }
}

/// The `error` of a subscriber ended because events were lost before they reached it
/// (`missed`: how many, `0` when not known), as the error of one that fell behind.
pub(crate) fn lagged(missed: u64, then: &str) -> serde_json::Value {
    let how_many = if missed == 0 { "events".to_owned() } else { format!("{missed} events") };
    tracing::info!(missed, "ended an observer: events were lost on their way to it");
    json!({ "error": {
        "code": ErrorCode::ObserverLagged,
        "message": format!("this observer missed {how_many} (the shared store did not take them) and was disconnected; {then}"),
    }})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::{Emitter, Hub, SUBSCRIBER_QUEUE, Sequence};

    #[tokio::test]
    async fn a_subscriber_that_falls_behind_gets_an_error_event_and_the_stream_ends() {
        let hub = Arc::new(Hub::default());
        let receiver = hub.subscribe();
        let emitter = Emitter {
            hub: Arc::clone(&hub),
            run_id: Some("run_1".to_owned()),
            session_id: None,
            flow_id: None,
            req_exec_id: None,
            sequence: Sequence::run(),
        };
        for _ in 0..=SUBSCRIBER_QUEUE {
            emitter.emit(volley_protocol::ObserverEvent::FetchStarted(volley_protocol::RequestLine::default()));
        }
        let heartbeat = tokio::time::interval(std::time::Duration::from_secs(60));
        let (event, rest) = next_event(Some((receiver, heartbeat, Filters::default(), 0))).await.expect("an event");
        assert!(rest.is_none(), "the stream ends after the error");
        let text = format!("{:?}", event.expect("infallible"));
        assert!(text.contains("OBSERVER_LAGGED"), "{text}");
    }
}
