//! What `shop.v1.Orders` answers: the behaviour of `tests/grpc/server.mjs`, method by
//! method, and the rich error details of `Place` that only this server sends.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use futures_util::stream::{self, BoxStream, StreamExt as _};
use tokio::sync::mpsc;
use tonic::metadata::MetadataValue;
use tonic::{Request, Response, Status, Streaming};

use super::rich_status;
use super::shop::common::Money;
use super::shop::v1::{Line, ListRequest, Order, PlaceRequest, orders_server};

/// How long `Place` with item `slow` takes.
const SLOW_PLACE: Duration = Duration::from_secs(2);
/// How long `Chat` waits before echoing a line that starts with `slow`.
const SLOW_ECHO: Duration = Duration::from_millis(300);

/// The service; it keeps no state between calls.
#[derive(Debug)]
pub(crate) struct Orders;

#[tonic::async_trait]
impl orders_server::Orders for Orders {
    async fn place(&self, request: Request<PlaceRequest>) -> Result<Response<Order>, Status> {
        let request_id = request.metadata().get("x-request-id").and_then(|value| value.to_str().ok());
        let request_id = request_id.unwrap_or_default().to_owned();
        let place = request.into_inner();
        match place.item.as_str() {
            "fail" => return Err(no_such_item()),
            "slow" => tokio::time::sleep(SLOW_PLACE).await,
            _ => {}
        }
        let order = Order {
            id: "order-1".to_owned(),
            item: place.item,
            quantity: place.quantity,
            price: place.price,
            at: place.at,
            request_id,
        };
        let mut response = Response::new(order);
        response.metadata_mut().insert("x-served-by", MetadataValue::from_static("tonic"));
        Ok(response)
    }

    type ListStream = BoxStream<'static, Result<Order, Status>>;

    async fn list(&self, request: Request<ListRequest>) -> Result<Response<Self::ListStream>, Status> {
        let count = request.into_inner().count;
        let orders = (1..=count).map(|index| {
            Ok(Order {
                id: format!("order-{index}"),
                item: format!("item {index}"),
                quantity: i64::from(index),
                ..Order::default()
            })
        });
        Ok(Response::new(stream::iter(orders.collect::<Vec<_>>()).boxed()))
    }

    async fn total(&self, request: Request<Streaming<Money>>) -> Result<Response<Money>, Status> {
        let mut amounts = request.into_inner();
        let mut total = Money::default();
        while let Some(money) = amounts.message().await? {
            total.units = total
                .units
                .checked_add(money.units)
                .ok_or_else(|| Status::out_of_range("the total overflows int64"))?;
            total.currency = money.currency;
        }
        Ok(Response::new(total))
    }

    type ChatStream = BoxStream<'static, Result<Line, Status>>;

    async fn chat(&self, request: Request<Streaming<Line>>) -> Result<Response<Self::ChatStream>, Status> {
        let mut lines = request.into_inner();
        let (echoes, answers) = mpsc::unbounded_channel::<Result<Line, Status>>();
        // Lines received so far, read again when a slow echo is written.
        let heard = Arc::new(AtomicI32::new(0));
        // The stream of echoes ends when every sender is gone: this reader's once the
        // client has ended, each slow echo's once it is written.
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.message().await {
                let position = heard.fetch_add(1, Ordering::SeqCst) + 1;
                if line.text.starts_with("slow") {
                    let (echoes, heard) = (echoes.clone(), Arc::clone(&heard));
                    tokio::spawn(async move {
                        tokio::time::sleep(SLOW_ECHO).await;
                        let text = format!("echo: {} (heard {})", line.text, heard.load(Ordering::SeqCst));
                        echoes.send(Ok(Line { position, text })).ok();
                    });
                } else {
                    echoes.send(Ok(Line { position, text: format!("echo: {}", line.text) })).ok();
                }
            }
        });
        let answers = stream::unfold(answers, |mut answers| async move {
            let answer = answers.recv().await?;
            Some((answer, answers))
        });
        Ok(Response::new(answers.boxed()))
    }
}

/// `INVALID_ARGUMENT` for the item `fail`, with grpc-js's message and a `BadRequest` in
/// `grpc-status-details-bin`.
fn no_such_item() -> Status {
    let code = tonic::Code::InvalidArgument;
    let message = "no such item: \"fail\" (try another)";
    let details = rich_status::bad_request(code, message, "item", "no such item");
    Status::with_details(code, message, details)
}
