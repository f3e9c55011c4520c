//! The client's settings (`initializationOptions` at start,
//! `workspace/didChangeConfiguration` later): the active profile, the cookie jar file
//! and the execution server sends go through.

use serde_json::Value;
use tower_lsp_server::ls_types::MessageType;

use crate::backend::Backend;
use crate::cookies;
use crate::execute::remote;

impl Backend {
    /// Applies changed settings: the sends' settings, then the profile when they say one.
    pub(crate) async fn apply_settings(&self, settings: &Value) {
        self.apply_send_settings(settings).await;
        match profile_setting(settings) {
            ProfileSetting::Unsaid => {}
            ProfileSetting::Profile(profile) => self.set_profile(Some(profile)),
            ProfileSetting::Nothing => self.set_profile(None),
        }
    }

    /// Selects the active profile; every document's diagnostics follow.
    pub(crate) fn set_profile(&self, profile: Option<String>) {
        let profile = profile.filter(|name| !name.is_empty());
        {
            let mut environment = self.environment.lock();
            if environment.profile == profile {
                return;
            }
            environment.profile = profile;
        }
        self.publish_all();
    }

    /// Applies the `server` and `cookieJar` settings of `settings`: a replaced execution
    /// server's flow is finished in the background, and a `cookieJar` that remote sends
    /// do not use is said so rather than ignored in silence.
    pub(crate) async fn apply_send_settings(&self, settings: &Value) {
        self.jars.set_file(cookies::setting(settings));
        self.history.apply(settings);
        if let Some(replaced) = self.remote.set(remote::setting(settings))
            && let Ok(client) = replaced.client
        {
            tokio::spawn(async move { drop(client.close().await) });
        }
        let jar_file = matches!(cookies::setting(settings), cookies::Setting::File(_));
        if let Some(connection) = self.remote.connection() {
            let message = match &connection.client {
                Err(message) => Some(message.clone()),
                Ok(_) if jar_file => Some(format!(
                    "the `cookieJar` setting is not used while requests are sent through the execution server at \
                     {}: its session keeps the cookies",
                    connection.url
                )),
                Ok(_) => None,
            };
            if let Some(message) = message {
                self.client.show_message(MessageType::WARNING, message).await;
            }
        }
    }
}

/// The profile the settings at start select, if any.
pub(crate) fn initial_profile(settings: &Value) -> Option<String> {
    match profile_setting(settings) {
        ProfileSetting::Profile(profile) => Some(profile),
        ProfileSetting::Unsaid | ProfileSetting::Nothing => None,
    }
}

/// What settings say of the active profile.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ProfileSetting {
    /// Nothing.
    Unsaid,
    /// This profile.
    Profile(String),
    /// No profile (`null` or `""`).
    Nothing,
}

/// The active profile in settings: `{"volley": {"profile": …}}` or `{"profile": …}`.
fn profile_setting(settings: &Value) -> ProfileSetting {
    let section = settings.get("volley").unwrap_or(settings);
    match section.get("profile") {
        None => ProfileSetting::Unsaid,
        Some(value) => value
            .as_str()
            .filter(|name| !name.is_empty())
            .map_or(ProfileSetting::Nothing, |name| ProfileSetting::Profile(name.to_owned())),
    }
}
