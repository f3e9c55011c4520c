//! The observer's screen state and what keys and updates do to it. Pure: the terminal
//! loop (`lib.rs`) feeds it keys, mouse scrolls, updates from the connection and the
//! time; rendering (`view.rs`) reads it.

use std::collections::{HashMap, VecDeque};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use volley_protocol::StoredExecution;

use crate::connection::Update;
use crate::state::{Execution, State};

/// Execution details kept (fetched from the execution store); the oldest go first.
const DETAIL_CACHE: usize = 64;

/// Which list the keys move in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Executions,
    Flows,
    Sessions,
}

/// The state of the connection to `/event/ws`, as the status line shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum Link {
    Connecting,
    Connected,
    /// Disconnected for `reason`; the next attempt at `retry_at` (ms, the loop's clock).
    Disconnected {
        reason: String,
        retry_at: u64,
    },
}

/// What the detail pane shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Detail {
    Execution(String),
    Session(String),
}

/// A stored execution, as `GET /flows/{flowId}/executions/{reqExecId}` answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Fetched {
    Loading,
    /// Read as the protocol's type.
    Loaded(Box<StoredExecution>),
    Failed(String),
}

/// What the loop must do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    None,
    Quit,
    /// Fetch this execution from the store: `(key, flowId, reqExecId)`.
    Fetch(String, String, String),
}

/// The whole screen state.
#[derive(Debug)]
pub struct App {
    pub state: State,
    pub server: String,
    /// What is watched: `everything`, `flow …`, `session …`.
    pub scope: String,
    pub link: Link,
    /// A warning under the status line (events possibly missed, …).
    pub notice: Option<String>,
    pub filter: String,
    pub editing_filter: bool,
    pub follow: bool,
    pub focus: Pane,
    /// Index into [`App::visible`].
    pub selected: usize,
    pub flow_cursor: usize,
    pub session_cursor: usize,
    /// Only this flow's executions (chosen in the flows pane).
    pub flow_filter: Option<String>,
    pub detail: Option<Detail>,
    pub detail_scroll: u16,
    pub details: HashMap<String, Fetched>,
    detail_order: VecDeque<String>,
    /// Keys of the executions that pass the filters, oldest first.
    pub visible: Vec<String>,
    /// How many of them failed.
    pub visible_failed: usize,
    /// Rows the executions list showed last (for paging).
    pub page: usize,
    dirty: bool,
}

impl App {
    #[must_use]
    pub fn new(server: impl Into<String>, scope: impl Into<String>) -> Self {
        Self {
            state: State::default(),
            server: server.into(),
            scope: scope.into(),
            link: Link::Connecting,
            notice: None,
            filter: String::new(),
            editing_filter: false,
            follow: true,
            focus: Pane::Executions,
            selected: 0,
            flow_cursor: 0,
            session_cursor: 0,
            flow_filter: None,
            detail: None,
            detail_scroll: 0,
            details: HashMap::new(),
            detail_order: VecDeque::new(),
            visible: Vec::new(),
            visible_failed: 0,
            page: 20,
            dirty: true,
        }
    }

    /// Takes an update of the connection in.
    pub fn update(&mut self, update: Update, now: u64) {
        match update {
            Update::Connected => {
                self.link = Link::Connected;
            }
            Update::Event(event) => {
                if self.state.apply(&event) {
                    self.dirty = true;
                }
            }
            Update::Disconnected { reason, retry_in } => {
                self.link =
                    Link::Disconnected { reason, retry_at: now + u64::try_from(retry_in.as_millis()).unwrap_or(0) };
            }
            Update::Notice(notice) => self.notice = Some(notice),
            Update::FlowGone(flow) => self.state.flow_gone(&flow),
            Update::SessionGone(id) => self.state.session_gone(&id),
            Update::Detail { key, result } => {
                let fetched = match result.and_then(|value| {
                    serde_json::from_value::<StoredExecution>(value)
                        .map_err(|error| format!("the execution store answered something else: {error}"))
                }) {
                    Ok(stored) => Fetched::Loaded(Box::new(stored)),
                    Err(message) => Fetched::Failed(message),
                };
                self.remember(key, fetched);
            }
        }
    }

    /// Brings [`App::visible`] up to date (after events or a filter change).
    pub fn refresh(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let selected_key = self.visible.get(self.selected).cloned();
        self.visible =
            self.state.visible(&self.filter, self.flow_filter.as_deref()).into_iter().map(str::to_owned).collect();
        self.visible_failed =
            self.visible.iter().filter(|key| self.state.execution_by_key(key).is_some_and(Execution::failed)).count();
        if self.follow {
            self.selected = self.visible.len().saturating_sub(1);
        } else if let Some(key) = selected_key {
            // Keep the same execution selected while others arrive or are dropped.
            self.selected = self.visible.iter().position(|candidate| *candidate == key).unwrap_or(0);
        }
        self.selected = self.selected.min(self.visible.len().saturating_sub(1));
        self.flow_cursor = self.flow_cursor.min(self.state.flows().len().saturating_sub(1));
        self.session_cursor = self.session_cursor.min(self.state.sessions().len().saturating_sub(1));
    }

    /// Sets the filter words (as typing after `/` does).
    pub fn set_filter(&mut self, filter: &str) {
        filter.clone_into(&mut self.filter);
        self.dirty = true;
    }

    /// The selected execution's key.
    #[must_use]
    pub fn selected_key(&self) -> Option<&str> {
        self.visible.get(self.selected).map(String::as_str)
    }

    /// Handles a key.
    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::None;
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Action::Quit;
        }
        if self.editing_filter {
            self.edit_filter(key.code);
            return Action::None;
        }
        match key.code {
            KeyCode::Char('q') => return Action::Quit,
            KeyCode::Char('/') => {
                self.editing_filter = true;
            }
            KeyCode::Char('f') => {
                self.follow = !self.follow;
                self.dirty = true;
            }
            KeyCode::Tab => {
                self.focus = match self.focus {
                    Pane::Executions => Pane::Flows,
                    Pane::Flows => Pane::Sessions,
                    Pane::Sessions => Pane::Executions,
                };
            }
            KeyCode::BackTab => {
                self.focus = match self.focus {
                    Pane::Executions => Pane::Sessions,
                    Pane::Flows => Pane::Executions,
                    Pane::Sessions => Pane::Flows,
                };
            }
            KeyCode::Esc => {
                if self.detail.is_some() {
                    self.detail = None;
                } else if !self.filter.is_empty() || self.flow_filter.is_some() {
                    self.filter.clear();
                    self.flow_filter = None;
                    self.dirty = true;
                }
            }
            KeyCode::Enter => return self.open(),
            KeyCode::Down | KeyCode::Char('j') => self.move_by(1),
            KeyCode::Up | KeyCode::Char('k') => self.move_by(-1),
            KeyCode::PageDown => self.move_by(isize::try_from(self.page.max(1)).unwrap_or(1)),
            KeyCode::PageUp => self.move_by(-isize::try_from(self.page.max(1)).unwrap_or(1)),
            KeyCode::Home | KeyCode::Char('g') => self.move_by(isize::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.move_by(isize::MAX / 2),
            _ => {}
        }
        Action::None
    }

    /// A mouse wheel step: down is positive.
    pub fn on_scroll(&mut self, lines: isize) {
        self.move_by(lines);
    }

    fn edit_filter(&mut self, code: KeyCode) {
        match code {
            KeyCode::Enter => self.editing_filter = false,
            KeyCode::Esc => {
                self.editing_filter = false;
                self.filter.clear();
            }
            KeyCode::Backspace => {
                self.filter.pop();
            }
            KeyCode::Char(character) => self.filter.push(character),
            _ => return,
        }
        self.dirty = true;
    }

    fn move_by(&mut self, delta: isize) {
        if self.detail.is_some() {
            let scroll = i64::from(self.detail_scroll).saturating_add(delta as i64).clamp(0, i64::from(u16::MAX));
            self.detail_scroll = u16::try_from(scroll).unwrap_or(0);
            return;
        }
        let (cursor, length) = match self.focus {
            Pane::Executions => (&mut self.selected, self.visible.len()),
            Pane::Flows => (&mut self.flow_cursor, self.state.flows().len()),
            Pane::Sessions => (&mut self.session_cursor, self.state.sessions().len()),
        };
        let last = isize::try_from(length.saturating_sub(1)).unwrap_or(0);
        let moved = isize::try_from(*cursor).unwrap_or(0).saturating_add(delta).clamp(0, last);
        *cursor = usize::try_from(moved).unwrap_or(0);
        if self.focus == Pane::Executions && length > 0 {
            // Following means staying on the newest; moving away from it stops that.
            self.follow = *cursor + 1 == length && (self.follow || delta > 0);
        }
    }

    fn open(&mut self) -> Action {
        self.detail_scroll = 0;
        match self.focus {
            Pane::Executions => {
                let Some(key) = self.selected_key().map(str::to_owned) else { return Action::None };
                self.detail = Some(Detail::Execution(key.clone()));
                let Some(execution) = self.state.execution_by_key(&key) else { return Action::None };
                match (&execution.flow_id, &execution.req_exec_id) {
                    (Some(flow), Some(exec)) if !matches!(self.details.get(&key), Some(Fetched::Loaded(_))) => {
                        let action = Action::Fetch(key.clone(), flow.clone(), exec.clone());
                        self.remember(key, Fetched::Loading);
                        action
                    }
                    _ => Action::None,
                }
            }
            Pane::Flows => {
                let Some(flow) = self.state.flows().get(self.flow_cursor) else { return Action::None };
                self.flow_filter =
                    if self.flow_filter.as_deref() == Some(&flow.id) { None } else { Some(flow.id.clone()) };
                self.dirty = true;
                self.focus = Pane::Executions;
                Action::None
            }
            Pane::Sessions => {
                if let Some(session) = self.state.sessions().get(self.session_cursor) {
                    self.detail = Some(Detail::Session(session.id.clone()));
                }
                Action::None
            }
        }
    }

    fn remember(&mut self, key: String, fetched: Fetched) {
        if self.details.insert(key.clone(), fetched).is_none() {
            self.detail_order.push_back(key);
            if self.detail_order.len() > DETAIL_CACHE
                && let Some(oldest) = self.detail_order.pop_front()
            {
                self.details.remove(&oldest);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use ratatui::crossterm::event::KeyEvent;
    use serde_json::json;

    use volley_protocol::ObserverEvent;

    use super::*;
    use crate::state::Envelope;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn execution(app: &mut App, flow: &str, n: u64, status: u16) {
        for (kind, payload) in [
            ("fetchStarted", json!({"method": "GET", "url": format!("http://api/items/{n}")})),
            ("executionFinished", json!({"status": status, "durationMs": 5.0})),
        ] {
            let event = Envelope {
                kind: kind.to_owned(),
                ts: 0,
                run_id: Some(format!("run{n}")),
                session_id: None,
                flow_id: Some(flow.to_owned()),
                req_exec_id: Some(format!("exec{n}")),
                seq: Some(n * 10 + u64::from(kind == "executionFinished")),
                event: ObserverEvent::from_owned_parts(kind, payload).ok(),
            };
            app.update(Update::Event(event), 0);
        }
        app.refresh();
    }

    #[test]
    fn following_keeps_the_newest_selected_until_the_user_moves_up() {
        let mut app = App::new("http://s", "everything");
        for n in 0..5 {
            execution(&mut app, "f", n, 200);
        }
        assert_eq!(app.selected_key(), Some("exec4"));
        app.on_key(key(KeyCode::Up));
        assert!(!app.follow);
        assert_eq!(app.selected_key(), Some("exec3"));
        execution(&mut app, "f", 5, 200);
        assert_eq!(app.selected_key(), Some("exec3"), "the selection stays put");
        app.on_key(key(KeyCode::Char('f')));
        app.refresh();
        assert!(app.follow);
        assert_eq!(app.selected_key(), Some("exec5"));
        app.on_key(key(KeyCode::Home));
        assert_eq!(app.selected_key(), Some("exec0"));
        app.on_key(key(KeyCode::End));
        assert_eq!(app.selected_key(), Some("exec5"));
    }

    #[test]
    fn the_filter_is_typed_after_slash_and_cleared_with_escape() {
        let mut app = App::new("http://s", "everything");
        execution(&mut app, "f", 1, 200);
        execution(&mut app, "f", 2, 404);
        app.on_key(key(KeyCode::Char('/')));
        for character in "404".chars() {
            app.on_key(key(KeyCode::Char(character)));
        }
        assert_eq!(app.on_key(key(KeyCode::Char('q'))), Action::None, "q is text while filtering");
        app.on_key(key(KeyCode::Backspace));
        app.on_key(key(KeyCode::Enter));
        app.refresh();
        assert_eq!(app.visible, ["exec2"]);
        app.on_key(key(KeyCode::Esc));
        app.refresh();
        assert_eq!(app.visible.len(), 2);
        assert_eq!(app.on_key(key(KeyCode::Char('q'))), Action::Quit);
    }

    #[test]
    fn enter_fetches_a_flow_execution_once_and_escape_closes_it() {
        let mut app = App::new("http://s", "everything");
        execution(&mut app, "f", 1, 200);
        assert_eq!(app.on_key(key(KeyCode::Enter)), Action::Fetch("exec1".into(), "f".into(), "exec1".into()));
        assert_eq!(app.details.get("exec1"), Some(&Fetched::Loading));
        app.update(Update::Detail { key: "exec1".into(), result: Ok(json!({"status": "success"})) }, 0);
        app.on_key(key(KeyCode::Esc));
        assert_eq!(app.detail, None);
        assert_eq!(app.on_key(key(KeyCode::Enter)), Action::None, "already loaded");
        assert_eq!(app.detail, Some(Detail::Execution("exec1".into())));
        app.on_key(key(KeyCode::Down));
        assert_eq!(app.detail_scroll, 1, "arrows scroll an open detail");
    }

    #[test]
    fn tab_moves_between_panes_and_enter_on_a_flow_filters_by_it() {
        let mut app = App::new("http://s", "everything");
        execution(&mut app, "a", 1, 200);
        execution(&mut app, "b", 2, 200);
        app.on_key(key(KeyCode::Tab));
        assert_eq!(app.focus, Pane::Flows);
        app.on_key(key(KeyCode::Down));
        app.on_key(key(KeyCode::Enter));
        app.refresh();
        assert_eq!(app.flow_filter.as_deref(), Some("b"));
        assert_eq!(app.visible, ["exec2"]);
        assert_eq!(app.focus, Pane::Executions);
        app.on_key(key(KeyCode::Esc));
        app.refresh();
        assert_eq!(app.visible.len(), 2);
    }

    #[test]
    fn disconnection_is_shown_with_its_retry_time() {
        let mut app = App::new("http://s", "everything");
        app.update(Update::Connected, 0);
        assert_eq!(app.link, Link::Connected);
        app.update(
            Update::Disconnected { reason: "connection refused".into(), retry_in: std::time::Duration::from_secs(2) },
            1_000,
        );
        assert_eq!(app.link, Link::Disconnected { reason: "connection refused".into(), retry_at: 3_000 });
    }
}
