//! Drawing the screen from an [`App`]: a status line, the flows and WebSocket sessions on
//! the left, the executions (only the rows in view are built), the detail pane, and a
//! line of keys.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, List, ListItem, ListState, Paragraph, Row, Table, Wrap};
use serde_json::Value;
use volley_protocol::{CheckOutcome, Header, StoredExecution};

use crate::app::{App, Detail, Fetched, Link, Pane};
use crate::state::{Direction, Execution, Outcome};

const FAILED: Style = Style::new().fg(Color::Red);
const PASSED: Style = Style::new().fg(Color::Green);
const MUTED: Style = Style::new().fg(Color::DarkGray);
const BOLD: Style = Style::new().add_modifier(Modifier::BOLD);
const SELECTED: Style = Style::new().add_modifier(Modifier::REVERSED);

/// Draws the whole screen; `now` is the loop's clock in ms (for the retry countdown).
pub fn render(frame: &mut Frame<'_>, app: &mut App, now: u64) {
    app.refresh();
    let [status, notice, body, keys] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(1), Constraint::Min(3), Constraint::Length(1)])
            .areas(frame.area());
    frame.render_widget(status_line(app, now), status);
    frame.render_widget(notice_line(app), notice);
    if app.detail.is_some() {
        // The detail takes the room of the flows and sessions while it is open.
        let [list, detail] = Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(body);
        render_executions(frame, app, list);
        render_detail(frame, app, detail);
    } else {
        let [side, main] = Layout::horizontal([Constraint::Length(32), Constraint::Min(20)]).areas(body);
        let [flows, sessions] = Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(side);
        render_flows(frame, app, flows);
        render_sessions(frame, app, sessions);
        render_executions(frame, app, main);
    }
    frame.render_widget(Paragraph::new(key_line(app)).style(MUTED), keys);
}

fn status_line(app: &App, now: u64) -> Line<'static> {
    let link = match &app.link {
        Link::Connecting => Span::styled("connecting…", Style::new().fg(Color::Yellow)),
        Link::Connected => Span::styled("● connected", PASSED),
        Link::Disconnected { reason, retry_at } => {
            let seconds = retry_at.saturating_sub(now).div_ceil(100);
            Span::styled(
                format!("✗ DISCONNECTED: {reason} — reconnecting in {}.{} s", seconds / 10, seconds % 10),
                FAILED.add_modifier(Modifier::BOLD),
            )
        }
    };
    let failed = app.visible_failed;
    let dropped = if app.state.dropped > 0 { format!(", {} older dropped", app.state.dropped) } else { String::new() };
    Line::from(vec![
        Span::styled("volley observe ", BOLD),
        Span::raw(format!("{} · {} · ", app.server, app.scope)),
        link,
        Span::raw(format!(
            " · {} of {} executions, {failed} failed{dropped} · follow {}",
            app.visible.len(),
            app.state.execution_count(),
            if app.follow { "on" } else { "off" }
        )),
    ])
}

fn notice_line(app: &App) -> Line<'static> {
    if app.editing_filter || !app.filter.is_empty() || app.flow_filter.is_some() {
        let cursor = if app.editing_filter { "▏" } else { "" };
        let flow = app.flow_filter.as_ref().map(|flow| format!("  (flow {flow})")).unwrap_or_default();
        return Line::from(vec![Span::styled("filter: ", BOLD), Span::raw(format!("{}{cursor}{flow}", app.filter))]);
    }
    match &app.notice {
        Some(notice) => Line::styled(notice.clone(), Style::new().fg(Color::Yellow)),
        None => Line::default(),
    }
}

fn key_line(app: &App) -> &'static str {
    if app.editing_filter {
        "type to filter · Enter keep · Esc clear"
    } else if app.detail.is_some() {
        "↑↓/j k PgUp PgDn scroll · Esc close · q quit"
    } else {
        "↑↓/j k move · Enter details · Tab pane · / filter · f follow · Esc clear · q quit"
    }
}

fn pane_block(title: String, focused: bool) -> Block<'static> {
    let style = if focused { Style::new().fg(Color::Cyan) } else { Style::new() };
    Block::default().borders(Borders::ALL).border_style(style).title(title)
}

fn render_flows(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let items: Vec<ListItem<'_>> = app
        .state
        .flows()
        .iter()
        .map(|flow| {
            let name = if flow.label.is_empty() { flow.id.clone() } else { flow.label.clone() };
            let state = if flow.finished {
                format!("done {}", flow.duration_ms.map(milliseconds).unwrap_or_default())
            } else if flow.gone {
                "gone from the server".to_owned()
            } else {
                "running".to_owned()
            };
            let marker = if app.flow_filter.as_deref() == Some(&flow.id) { "▸ " } else { "" };
            let mut counts = vec![Span::styled(format!("  {} run · {} ok", flow.total, flow.succeeded), MUTED)];
            if flow.failed > 0 {
                counts.push(Span::styled(format!(" · {} failed", flow.failed), FAILED));
            }
            ListItem::new(vec![
                Line::raw(format!("{marker}{name}")),
                Line::styled(format!("  {state}"), MUTED),
                Line::from(counts),
            ])
        })
        .collect();
    let empty = items.is_empty();
    let list =
        List::new(items).block(pane_block(" Flows ".to_owned(), app.focus == Pane::Flows)).highlight_style(SELECTED);
    let mut state = ListState::default().with_selected((!empty && app.focus == Pane::Flows).then_some(app.flow_cursor));
    frame.render_stateful_widget(list, area, &mut state);
}

fn render_sessions(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let items: Vec<ListItem<'_>> = app
        .state
        .sessions()
        .iter()
        .map(|session| {
            let state = match &session.closed {
                Some((code, _)) => Span::styled(format!("closed {code}"), MUTED),
                None if session.gone => Span::styled("gone from the server", MUTED),
                None => Span::styled("open", PASSED),
            };
            let count = session.messages.len() as u64 + session.dropped;
            ListItem::new(vec![
                Line::raw(session.upstream_url.clone()),
                Line::from(vec![Span::raw("  "), state, Span::styled(format!(" · {count} messages"), MUTED)]),
            ])
        })
        .collect();
    let empty = items.is_empty();
    let list = List::new(items)
        .block(pane_block(" WebSocket sessions ".to_owned(), app.focus == Pane::Sessions))
        .highlight_style(SELECTED);
    let mut state =
        ListState::default().with_selected((!empty && app.focus == Pane::Sessions).then_some(app.session_cursor));
    frame.render_stateful_widget(list, area, &mut state);
}

/// The executions: only the rows that fit are built, whatever the number kept.
fn render_executions(frame: &mut Frame<'_>, app: &mut App, area: Rect) {
    let block = pane_block(" Executions ".to_owned(), app.focus == Pane::Executions);
    let rows_fit = usize::from(area.height.saturating_sub(3)).max(1);
    app.page = rows_fit.saturating_sub(1).max(1);
    if app.visible.is_empty() {
        let text = if app.state.execution_count() == 0 {
            "No executions yet. Run requests through this server (volley run --server URL, the API or an editor)."
        } else {
            "No execution matches the filter."
        };
        frame.render_widget(Paragraph::new(text).style(MUTED).wrap(Wrap { trim: true }).block(block), area);
        return;
    }
    let first = window_start(app.selected, app.visible.len(), rows_fit);
    let rows: Vec<Row<'_>> = app.visible[first..(first + rows_fit).min(app.visible.len())]
        .iter()
        .enumerate()
        .filter_map(|(offset, key)| {
            let execution = app.state.execution_by_key(key)?;
            let mut row = execution_row(execution);
            if first + offset == app.selected && app.focus == Pane::Executions {
                row = row.style(execution_style(execution).add_modifier(Modifier::REVERSED));
            }
            Some(row)
        })
        .collect();
    let header = Row::new(["time (UTC)", "method", "URL", "status", "ms", "checks"]).style(BOLD);
    let widths = [
        Constraint::Length(12),
        Constraint::Length(7),
        Constraint::Min(10),
        Constraint::Length(7),
        Constraint::Length(8),
        Constraint::Length(6),
    ];
    frame.render_widget(Table::new(rows, widths).header(header).block(block), area);
}

/// The first row shown so that `selected` is in view (centred scrolling is not needed:
/// the selection sits on the last row while moving down, as lists usually do).
fn window_start(selected: usize, total: usize, fit: usize) -> usize {
    if total <= fit { 0 } else { selected.saturating_add(1).saturating_sub(fit).min(total - fit) }
}

fn execution_style(execution: &Execution) -> Style {
    match execution.outcome {
        Outcome::Failed => FAILED,
        Outcome::Pending | Outcome::Running => MUTED,
        Outcome::Succeeded => Style::new(),
    }
}

fn execution_row(execution: &Execution) -> Row<'static> {
    let status = match (&execution.error, execution.status) {
        (Some((stage, _)), _) => stage.clone(),
        (None, Some(status)) => status.to_string(),
        (None, None) => "…".to_owned(),
    };
    let checks = execution.checks.map(|checks| format!("{}/{}", checks.passed, checks.total)).unwrap_or_default();
    let url = if execution.url.is_empty() { execution.label.clone() } else { execution.url.clone() };
    Row::new(vec![
        Cell::from(time_of_day(execution.ts)),
        Cell::from(execution.method.clone()),
        Cell::from(url),
        Cell::from(status),
        Cell::from(execution.duration_ms.map(milliseconds).unwrap_or_default()),
        Cell::from(checks),
    ])
    .style(execution_style(execution))
}

fn render_detail(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let (title, lines) = match &app.detail {
        Some(Detail::Execution(key)) => (" Execution ", execution_detail(app, key)),
        Some(Detail::Session(id)) => (" WebSocket session ", session_detail(app, id)),
        None => return,
    };
    let paragraph = Paragraph::new(lines)
        .block(Block::default().borders(Borders::ALL).border_style(Style::new().fg(Color::Cyan)).title(title))
        .wrap(Wrap { trim: false })
        .scroll((app.detail_scroll, 0));
    frame.render_widget(paragraph, area);
}

fn execution_detail(app: &App, key: &str) -> Vec<Line<'static>> {
    let Some(execution) = app.state.execution_by_key(key) else {
        return vec![Line::styled("This execution is no longer kept (older ones are dropped).", MUTED)];
    };
    let mut lines = vec![Line::styled(format!("{} {}", execution.method, execution.url), BOLD)];
    if !execution.label.is_empty() {
        lines.push(Line::styled(execution.label.clone(), MUTED));
    }
    if !execution.description.is_empty() {
        lines.push(Line::raw(execution.description.clone()));
    }
    if let Some(sign_in) = &execution.sign_in {
        lines.push(Line::styled(sign_in.clone(), BOLD));
    }
    if let Some((count, last)) = &execution.grpc_messages {
        let plural = if *count == 1 { "message" } else { "messages" };
        lines.push(Line::raw(format!("gRPC: {count} {plural}, the last: {last}")));
    }
    if let Some((stage, message)) = &execution.error {
        lines.push(Line::styled(format!("failed ({stage}): {message}"), FAILED));
    }
    match app.details.get(key) {
        Some(Fetched::Loaded(stored)) => stored_detail(stored, &execution.url, &mut lines),
        Some(Fetched::Loading) => lines.push(Line::styled("loading from the execution store…", MUTED)),
        Some(Fetched::Failed(message)) => lines.push(Line::styled(message.clone(), FAILED)),
        None => {
            lines.push(Line::raw(format!(
                "status {} · {}",
                execution.status.map_or_else(|| "—".to_owned(), |status| status.to_string()),
                execution.duration_ms.map(milliseconds).unwrap_or_default()
            )));
            lines.push(Line::styled(
                "The execution store keeps executions of flows only: this one shows what its events carried.",
                MUTED,
            ));
        }
    }
    lines
}

/// What the execution store kept, under the headline (method and `shown_url`, from the events).
fn stored_detail(stored: &StoredExecution, shown_url: &str, lines: &mut Vec<Line<'static>>) {
    let timing = &stored.timing;
    // The URL as written, when variables made it differ; the resolved one only when it is news.
    for (url, style) in [(&stored.url_template, "written as "), (&stored.url_resolved, "")] {
        if !url.is_empty() && url != shown_url {
            lines.push(Line::styled(format!("{style}{url}"), MUTED));
        }
    }
    if let Some(response) = &stored.response {
        let style = if response.status >= 400 { FAILED } else { PASSED };
        lines.push(Line::from(vec![
            Span::styled(format!("{} {}", response.status, response.status_text), style.add_modifier(Modifier::BOLD)),
            Span::raw(format!(
                " · {} · first byte {} · {} bytes",
                timing.duration_ms.map(milliseconds).unwrap_or_default(),
                timing.ttfb.map(milliseconds).unwrap_or_default(),
                response.body_bytes
            )),
        ]));
    }
    if let Some(report) = &stored.assertions {
        lines.push(Line::default());
        lines.push(Line::styled(
            format!("Assertions: {}/{} passed", report.total.saturating_sub(report.failed), report.total),
            BOLD,
        ));
        for check in &report.checks {
            let expression = check.expression.clone();
            lines.push(match check.outcome {
                CheckOutcome::Passed => Line::from(vec![Span::styled("✓ ", PASSED), Span::raw(expression)]),
                // A script's `client.test` fails with a message, no expected value.
                CheckOutcome::Failed if check.expected.is_none() && check.message.is_some() => Line::from(vec![
                    Span::styled("✗ ", FAILED),
                    Span::raw(expression),
                    Span::styled(format!(" — {}", check.message.as_deref().unwrap_or_default()), FAILED),
                ]),
                CheckOutcome::Failed => Line::from(vec![
                    Span::styled("✗ ", FAILED),
                    Span::raw(expression),
                    Span::styled(
                        format!(
                            " — expected {}, got {}",
                            check.expected.as_deref().unwrap_or("null"),
                            check.actual.as_deref().unwrap_or("null")
                        ),
                        FAILED,
                    ),
                ]),
                CheckOutcome::Invalid => Line::from(vec![
                    Span::styled("✗ ", FAILED),
                    Span::raw(expression),
                    Span::styled(format!(" — {}", check.message.as_deref().unwrap_or("invalid")), FAILED),
                ]),
            });
        }
    }
    if !stored.logs.is_empty() {
        // Redacted by the server, as everything in the store.
        let title = if stored.logs_truncated { "Script log (cut)" } else { "Script log" };
        section(lines, title, stored.logs.iter().map(|line| Line::raw(line.clone())).collect());
    }
    section(lines, "Request headers", headers(&stored.headers));
    if let Some(body) = &stored.body_preview {
        section(lines, "Request body", pretty(body));
    }
    if let Some(response) = &stored.response {
        section(lines, "Response headers", headers(&response.headers));
        if let Some(body) = &response.body {
            let title = if response.truncated { "Response body (cut)" } else { "Response body" };
            let text = if response.encoding == "base64" {
                vec![Line::styled(format!("binary, {} bytes", response.body_bytes), MUTED)]
            } else {
                pretty(body)
            };
            section(lines, title, text);
        }
    }
}

fn section(lines: &mut Vec<Line<'static>>, title: &str, content: Vec<Line<'static>>) {
    lines.push(Line::default());
    lines.push(Line::styled(title.to_owned(), BOLD));
    if content.is_empty() {
        lines.push(Line::styled("none", MUTED));
    }
    lines.extend(content);
}

fn headers(headers: &[Header]) -> Vec<Line<'static>> {
    headers
        .iter()
        .map(|header| {
            Line::from(vec![
                Span::styled(format!("{}: ", header.name), Style::new().fg(Color::Cyan)),
                Span::raw(header.value.clone()),
            ])
        })
        .collect()
}

/// JSON indented (key order kept), anything else as it is, a line per line.
fn pretty(text: &str) -> Vec<Line<'static>> {
    let shown = serde_json::from_str::<Value>(text)
        .ok()
        .filter(|value| value.is_object() || value.is_array())
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or_else(|| text.to_owned());
    shown.lines().map(|line| Line::raw(line.to_owned())).collect()
}

fn session_detail(app: &App, id: &str) -> Vec<Line<'static>> {
    let Some(session) = app.state.sessions().iter().find(|session| session.id == id) else {
        return vec![Line::styled("This session is no longer known.", MUTED)];
    };
    let state = match &session.closed {
        Some((code, reason)) => format!("closed {code} {reason}"),
        None if session.gone => "gone from the server (it was open when the server stopped)".to_owned(),
        None => "open".to_owned(),
    };
    let mut lines = vec![
        Line::styled(session.upstream_url.clone(), BOLD),
        Line::styled(format!("{} · {state}", session.id), MUTED),
    ];
    if session.dropped > 0 {
        lines.push(Line::styled(format!("{} older messages are no longer kept", session.dropped), MUTED));
    }
    if session.messages.is_empty() {
        lines.push(Line::styled("no messages yet", MUTED));
    }
    for message in &session.messages {
        let (arrow, style) = match message.direction {
            Direction::Inbound => ("← in ", Style::new().fg(Color::Magenta)),
            Direction::Outbound => ("→ out", Style::new().fg(Color::Cyan)),
        };
        let cut =
            if message.truncated { format!(" (first 4 KiB of {} bytes)", message.byte_length) } else { String::new() };
        lines.push(Line::default());
        lines.push(Line::from(vec![
            Span::styled(arrow, style.add_modifier(Modifier::BOLD)),
            Span::styled(format!(" {}{cut}", time_of_day(message.ts)), MUTED),
        ]));
        if message.json {
            lines.extend(pretty(&message.preview));
        } else {
            lines.extend(message.preview.lines().map(|line| Line::raw(line.to_owned())));
        }
    }
    lines
}

/// `HH:MM:SS.mmm` of a time in ms since the epoch, in UTC.
fn time_of_day(ms: u64) -> String {
    if ms == 0 {
        return String::new();
    }
    let seconds = (ms / 1000) % 86_400;
    format!("{:02}:{:02}:{:02}.{:03}", seconds / 3600, seconds / 60 % 60, seconds % 60, ms % 1000)
}

fn milliseconds(value: f64) -> String {
    if value < 100.0 { format!("{value:.1} ms") } else { format!("{value:.0} ms") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_keeps_the_selection_in_view() {
        assert_eq!(window_start(0, 5, 10), 0);
        assert_eq!(window_start(3, 100, 10), 0);
        assert_eq!(window_start(9, 100, 10), 0);
        assert_eq!(window_start(10, 100, 10), 1);
        assert_eq!(window_start(99, 100, 10), 90);
    }

    #[test]
    fn times_are_utc_times_of_day() {
        assert_eq!(time_of_day(1_700_000_000_123), "22:13:20.123");
        assert_eq!(time_of_day(0), "");
        assert_eq!(milliseconds(12.345), "12.3 ms");
        assert_eq!(milliseconds(1234.0), "1234 ms");
    }
}
