//! Sending ahead: a request goes the moment the response before it is read, prepared
//! while that response was on its way ([`stages::prepare_ahead`]), and that response is
//! checked and shown while this request is under way; its output is written once this
//! one's response is read. What may be worked on meanwhile is bounded
//! ([`OVERLAPPED_BYTES`]); a response that writes variables or files is finished, and
//! the request after it prepared again, before that request goes.

use std::time::Instant;

use anyhow::Context as _;
use serde_json::{Map, Value};
use volley_engine::Client;
use volley_engine::stages::{self, Exchanged, PreparedRequest};

use super::{Book, Turn, Unit};
use crate::output;
use crate::run::outcome::{self, RequestResult};
use crate::run::{refusal, select};

/// What is under way in a unit sent ahead: the request sent whose response is still to
/// be checked and shown, and the next request prepared ahead.
#[derive(Default)]
pub(super) struct Pipeline<'a> {
    answered: Option<Answered<'a>>,
    ahead: Option<Ahead>,
}

impl Pipeline<'_> {
    /// Whether the request numbered `number` in the unit was prepared ahead.
    pub(super) fn prepared(&self, number: usize) -> bool {
        self.ahead.as_ref().is_some_and(|ahead| ahead.number == number)
    }
}

/// A request of the unit to send: its number there, its place in the run's results.
pub(super) struct Planned<'a> {
    pub(super) number: usize,
    pub(super) position: usize,
    pub(super) file: &'a select::File,
    pub(super) request: &'a volley_syntax::Request,
    pub(super) step: &'a select::Step,
}

impl Turn<'_> {
    /// Whether `request` may be sent the moment the response before it is read: an
    /// HTTP request that is sent as it is (not disabled, refused, asked about or looped).
    pub(super) fn plain(&self, file: &select::File, request: &volley_syntax::Request) -> bool {
        request.protocol == volley_syntax::Protocol::Http
            && !request.disabled
            && (request.note.is_none() || self.args.yes)
            && request.repeat().is_none()
            && refusal::of(&file.document, request).is_none()
    }

    /// Sends `this` through `client`, prepared ahead unless a response finished since,
    /// or the one before it still to finish, writes what its preparation reads (that one
    /// is then finished first and this one prepared now). While it is under way, the
    /// response before it is checked and shown, and `next` prepared ahead.
    pub(super) async fn send_ahead<'a>(
        &self,
        client: &Client,
        pipeline: &mut Pipeline<'a>,
        book: &mut Book,
        unit: &Unit,
        this: Planned<'a>,
        next: Option<(&select::File, &volley_syntax::Request, &select::Step)>,
    ) -> anyhow::Result<()> {
        let Planned { number, position, file, request, step } = this;
        let interrupt = &self.limits.interrupt;
        let prepared = match pipeline.ahead.take() {
            Some(Ahead { number: at, writes, prepared })
                if at == number
                    && writes == book.writes
                    && !pipeline.answered.as_ref().is_some_and(Answered::writes) =>
            {
                Ok(prepared)
            }
            _ => {
                Box::pin(self.settle(pipeline.answered.take(), unit, book)).await?;
                Box::pin(self.prepare(client, file, request, step.variables.as_deref())).await
            }
        };
        // A large response is checked and shown before this request goes.
        if pipeline.answered.as_ref().is_some_and(|answered| !answered.light()) {
            Box::pin(self.settle(pipeline.answered.take(), unit, book)).await?;
        }
        if !self.progress.is_hidden() {
            self.progress.set_message(outcome::title(file, request));
        }
        let started = Instant::now();
        let sending = async {
            match prepared {
                Ok(prepared) => Box::pin(stages::transmit(client, prepared, Some(interrupt))).await,
                Err(error) => Err(error),
            }
        };
        let answered = pipeline.answered.take();
        let meanwhile = async {
            // The connection's task writes the request first: it runs once this task yields.
            tokio::task::yield_now().await;
            // Printed once the response under way is read: a slow terminal or pipe must
            // not add to its time.
            let (settled, lines) = output::captured(Box::pin(self.settle(answered, unit, book))).await;
            settled?;
            let mut ahead = None;
            if let Some((next, request, step)) = next
                && self.plain(next, request)
                && light(request)
            {
                let options = self.options(step.variables.as_deref(), None);
                let path = Some(next.path.as_path());
                let prepared = Box::pin(stages::prepare_ahead(client, &next.document, request, path, &options)).await;
                ahead = prepared.map(|prepared| Ahead { number: number + 1, writes: book.writes, prepared });
            }
            anyhow::Ok((lines, ahead))
        };
        let (exchanged, settled) = futures_util::join!(sending, meanwhile);
        let (lines, ahead) = settled?;
        pipeline.ahead = ahead;
        self.progress.suspend(|| output::replay(lines));
        let streams = exchanged
            .as_ref()
            .is_ok_and(|exchanged| exchanged.response().is_streaming() || exchanged.response().is_websocket());
        pipeline.answered = Some(Answered { position, file, request, exchanged, started });
        // A stream is followed before anything else is sent.
        if streams {
            Box::pin(self.finish_under_way(pipeline, unit, book)).await?;
        }
        Ok(())
    }

    /// Checks, shows and counts the response still to be, if any: before a request
    /// sent in its turn, and at the end of the unit.
    pub(super) async fn finish_under_way(
        &self,
        pipeline: &mut Pipeline<'_>,
        unit: &Unit,
        book: &mut Book,
    ) -> anyhow::Result<()> {
        self.settle(pipeline.answered.take(), unit, book).await
    }

    /// `request` prepared in its turn, as [`volley_engine::Execute::run_parsed`]
    /// prepares it: the requests its `@ref` and `run` lines name first.
    async fn prepare(
        &self,
        client: &Client,
        file: &select::File,
        request: &volley_syntax::Request,
        variables: Option<&Map<String, Value>>,
    ) -> Result<PreparedRequest, volley_engine::Error> {
        let options = self.options(variables, None);
        let path = Some(file.path.as_path());
        Box::pin(stages::run_references(client, &file.document, request, path, &options)).await?;
        stages::prepare_request(client, &file.document, request, path, &options).await
    }

    /// The response of the request sent before, if any, checked ([`stages::finish`]),
    /// shown, its stream followed and its result counted.
    async fn settle(&self, answered: Option<Answered<'_>>, unit: &Unit, book: &mut Book) -> anyhow::Result<()> {
        let Some(Answered { position, file, request, exchanged, started }) = answered else { return Ok(()) };
        let client = self.local.context("requests are sent ahead through the run's own client")?;
        if exchanged.as_ref().is_ok_and(Exchanged::finish_writes) {
            book.writes += 1;
        }
        let response = exchanged.map(|exchanged| stages::finish(client, exchanged));
        let mut result = RequestResult::new(file, request, response).await;
        self.shown(&mut result, file, request, started, &book.missing).await;
        self.account(result, position, unit, file, book)
    }
}

/// A request prepared ahead of its turn: its number in the unit, and [`Book::writes`]
/// when it was prepared.
struct Ahead {
    number: usize,
    writes: usize,
    prepared: PreparedRequest,
}

/// A request sent whose response is still to be checked and shown.
struct Answered<'a> {
    position: usize,
    file: &'a select::File,
    request: &'a volley_syntax::Request,
    exchanged: Result<Exchanged, volley_engine::Error>,
    started: Instant,
}

impl Answered<'_> {
    /// Whether finishing it writes variables or files a request prepared ahead read.
    fn writes(&self) -> bool {
        self.exchanged.as_ref().is_ok_and(Exchanged::finish_writes)
    }

    /// Whether it is checked and shown while the next request is under way: an error,
    /// or a body of at most [`OVERLAPPED_BYTES`] (see there).
    fn light(&self) -> bool {
        self.exchanged.as_ref().map_or(true, |exchanged| {
            let response = exchanged.response();
            response.body_file.is_none() && response.body.read().is_some_and(|body| body.len() <= OVERLAPPED_BYTES)
        })
    }
}

/// The most bytes of a response body checked and shown, and of a request's body text
/// prepared, while another request is under way. That request's response may arrive
/// meanwhile and is only read when this work is done, so its measured time can grow by
/// as much: with small bodies, microseconds. Larger ones are worked on before the
/// next request goes, or after its response.
const OVERLAPPED_BYTES: usize = 4 * 1024;

/// Whether preparing `request` ahead is bounded work: no file is read for its body, and
/// its body's text is at most [`OVERLAPPED_BYTES`].
fn light(request: &volley_syntax::Request) -> bool {
    use volley_syntax::Body;
    match &request.body {
        Body::None => true,
        Body::Inline(template) => template.span.end - template.span.start <= OVERLAPPED_BYTES,
        Body::Form(_) | Body::File(_) | Body::Parts(_) | Body::GraphQl(_) => false,
    }
}
