//! `volley observe`: a terminal view of what runs through a `volley serve`, built on the
//! server's observer stream only (`/event/ws` with `afterSeq`, the execution store, the
//! `wsSessionMessage` events). See docs/observer.md.
//!
//! - `envelope.rs`: one frame of the observer stream read, its payload typed when known.
//! - `state.rs`: envelopes reduced into flows, executions and sessions (pure, capped).
//! - `app.rs`: the screen state and what keys and updates do to it (pure).
//! - `view.rs`: drawing it with ratatui (only the rows in view are built).
//! - `connection.rs`: following the stream, reconnecting, resuming with `afterSeq`.
//! - this file: the terminal and the loop that ties them together.

pub mod app;
pub mod connection;
mod envelope;
mod records;
pub mod state;
pub mod view;

use std::io::IsTerminal as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event, MouseEventKind};
use ratatui::crossterm::execute;
use tokio::sync::mpsc;

pub use app::App;
pub use connection::{Refusal, Target, Update};

/// How often the screen is redrawn at most.
const FRAME: Duration = Duration::from_millis(50);
/// Updates queued between the connection and the screen; when full the connection waits.
const UPDATE_QUEUE: usize = 8_192;

/// Why the observer could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(
        "volley observe needs a terminal: its output is not one\n  hint: to record events, read /event (Server-Sent Events) or /event/ws directly"
    )]
    NotATerminal,
    #[error("the terminal failed: {0}")]
    Terminal(#[from] std::io::Error),
}

/// Runs the observer until the user quits.
///
/// # Errors
/// When the server refuses this observer (token, scope), or the output is not a terminal.
pub async fn run(target: Target) -> Result<(), Error> {
    if target.token.is_some() && target.flow.is_none() && target.session.is_none() {
        return Err(Refusal::ScopeNeeded.into());
    }
    if !std::io::stdout().is_terminal() {
        return Err(Error::NotATerminal);
    }
    connection::preflight(&target).await?;
    let mut terminal = ratatui::init();
    // ratatui's hook restores the screen on a panic; mouse reporting is ours to stop.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(std::io::stdout(), DisableMouseCapture);
        previous(info);
    }));
    let _ = execute!(std::io::stdout(), EnableMouseCapture);
    let result = event_loop(&mut terminal, target).await;
    let _ = execute!(std::io::stdout(), DisableMouseCapture);
    ratatui::restore();
    result
}

async fn event_loop(terminal: &mut ratatui::DefaultTerminal, target: Target) -> Result<(), Error> {
    let started = Instant::now();
    let now = || u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut app = App::new(target.server.as_str().trim_end_matches('/'), target.scope());
    let (updates, mut updates_in) = mpsc::channel(UPDATE_QUEUE);
    let follower = tokio::spawn(connection::follow(target.clone(), updates.clone()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut input = read_input(Arc::clone(&stop));
    let mut frames = tokio::time::interval(FRAME);
    frames.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut dirty = true;
    let result = loop {
        tokio::select! {
            event = input.recv() => {
                let Some(event) = event else { break Ok(()) };
                match event {
                    Ok(Event::Key(key)) => match app.on_key(key) {
                        app::Action::Quit => break Ok(()),
                        app::Action::Fetch(key, flow, exec) => {
                            let target = target.clone();
                            let updates = updates.clone();
                            tokio::spawn(async move {
                                let result = connection::fetch_execution(&target, &flow, &exec).await;
                                let _ = updates.send(Update::Detail { key, result }).await;
                            });
                        }
                        app::Action::None => {}
                    },
                    Ok(Event::Mouse(mouse)) => match mouse.kind {
                        MouseEventKind::ScrollDown => app.on_scroll(3),
                        MouseEventKind::ScrollUp => app.on_scroll(-3),
                        _ => continue,
                    },
                    Ok(Event::Resize(..)) => {}
                    Ok(_) => continue,
                    Err(error) => break Err(Error::Terminal(error)),
                }
                dirty = true;
            }
            update = updates_in.recv() => {
                let Some(update) = update else { break Ok(()) };
                app.update(update, now());
                // Take in whatever else is queued before the next frame.
                while let Ok(update) = updates_in.try_recv() {
                    app.update(update, now());
                }
                dirty = true;
            }
            _ = frames.tick() => {
                let counting_down = matches!(app.link, app::Link::Disconnected { .. });
                if dirty || counting_down {
                    terminal.draw(|frame| view::render(frame, &mut app, now()))?;
                    dirty = false;
                }
            }
        }
    };
    stop.store(true, Ordering::Relaxed);
    follower.abort();
    result
}

/// Terminal events, read on a thread of their own (crossterm's reads block).
fn read_input(stop: Arc<AtomicBool>) -> mpsc::Receiver<std::io::Result<Event>> {
    let (sender, receiver) = mpsc::channel(256);
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match event::poll(Duration::from_millis(100)) {
                Ok(false) => {}
                Ok(true) => {
                    if sender.blocking_send(event::read()).is_err() {
                        return;
                    }
                }
                Err(error) => {
                    let _ = sender.blocking_send(Err(error));
                    return;
                }
            }
        }
    });
    receiver
}
