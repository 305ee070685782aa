//! Post templates (minijinja): loaded and compiled once at startup, so a bad template stops the
//! bot before it claims anything. Rendering fills the fields from a [`Match`], each cleaned by
//! [`crate::text::clean`].

use crate::cricket::Match;
use crate::text::clean;
use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;
use std::path::{Path, PathBuf};
use url::Url;

/// The template shipped in the repository, used when `TEMPLATE_PATH` is not set.
pub const DEFAULT_TEMPLATE_PATH: &str = "templates/announce.txt";

/// A template that failed to load, compile or render.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// The file could not be read.
    #[error("cannot read template {path}: {source}")]
    Read {
        /// The template's path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Syntax error, unknown field or filter (minijinja's message names the line).
    #[error("template {path}: {source:#}")]
    Invalid {
        /// The template's path.
        path: PathBuf,
        /// minijinja's error.
        #[source]
        source: minijinja::Error,
    },
}

/// A compiled post template.
#[derive(Debug)]
pub struct Template {
    env: Environment<'static>,
    path: PathBuf,
}

/// The fields a template may use; documented in `templates/announce.txt`.
#[derive(Serialize)]
struct Fields {
    title: String,
    team1: String,
    team2: String,
    team1_short: String,
    team2_short: String,
    series: String,
    description: String,
    format: String,
    venue: String,
    start: String,
    start_iso: String,
    state: &'static str,
    status: String,
    site: &'static str,
    link: String,
}

impl Fields {
    fn of(m: &Match, link: &Url) -> Fields {
        let [t1, t2] = &m.teams;
        let short = |t: &crate::cricket::Team| clean(t.short_name.as_deref().unwrap_or(&t.name));
        let team1 = clean(&t1.name);
        let team2 = clean(&t2.name);
        Fields {
            title: format!("{team1} v {team2}"),
            team1_short: short(t1),
            team2_short: short(t2),
            team1,
            team2,
            series: m.series.as_deref().map(clean).unwrap_or_default(),
            description: m.description.as_deref().map(clean).unwrap_or_default(),
            format: clean(m.format.label()),
            venue: m.venue.as_ref().map(|v| clean(&v.to_string())).unwrap_or_default(),
            start: m
                .start_time
                .map(|t| t.format("%a %-d %b, %H:%M UTC").to_string())
                .unwrap_or_default(),
            start_iso: m
                .start_time
                .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
                .unwrap_or_default(),
            state: m.state.as_str(),
            status: m.status.as_deref().map(clean).unwrap_or_default(),
            site: m.site.as_str(),
            link: link.to_string(),
        }
    }
}

impl Template {
    /// Reads and compiles the template at `path`, then renders it once for a sample match so
    /// that an unknown field is a startup error, not a failure after a claim.
    ///
    /// # Errors
    /// [`TemplateError::Read`] when the file cannot be read, [`TemplateError::Invalid`] for a
    /// syntax error or an unknown field (the message names the path and line).
    pub fn load(path: &Path) -> Result<Template, TemplateError> {
        let source = std::fs::read_to_string(path).map_err(|source| TemplateError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Template::from_source(path, source)
    }

    /// Compiles `source`, naming it `path` in errors; see [`Template::load`].
    ///
    /// # Errors
    /// [`TemplateError::Invalid`] as for [`Template::load`].
    pub fn from_source(path: &Path, source: String) -> Result<Template, TemplateError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        let name = path.display().to_string();
        env.add_template_owned(name, source)
            .map_err(|source| TemplateError::Invalid {
                path: path.to_path_buf(),
                source,
            })?;
        let template = Template {
            env,
            path: path.to_path_buf(),
        };
        template.render(&sample_match(), &sample_match().url)?;
        Ok(template)
    }

    /// The path the template was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renders the post text for `m` with `link` as the match link. Blank lines (from empty
    /// optional fields) are dropped and each line is trimmed.
    ///
    /// # Errors
    /// [`TemplateError::Invalid`] when rendering fails (cannot happen for a template that
    /// loaded, unless it fails on particular values, e.g. a filter on an empty field).
    pub fn render(&self, m: &Match, link: &Url) -> Result<String, TemplateError> {
        let invalid = |source| TemplateError::Invalid {
            path: self.path.clone(),
            source,
        };
        let name = self.path.display().to_string();
        let raw = self
            .env
            .get_template(&name)
            .and_then(|t| t.render(Fields::of(m, link)))
            .map_err(invalid)?;
        let lines: Vec<&str> = raw.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        Ok(lines.join("\n"))
    }
}

/// A match with every field filled, for the startup trial render.
fn sample_match() -> Match {
    use crate::cricket::{Format, MatchState, Site, Team, Venue};
    Match {
        site: Site::Cricbuzz,
        source_id: "0".into(),
        teams: [
            Team {
                name: "Home".into(),
                short_name: Some("HOM".into()),
            },
            Team {
                name: "Away".into(),
                short_name: Some("AWY".into()),
            },
        ],
        series: Some("Series".into()),
        description: Some("1st T20I".into()),
        format: Format::T20i,
        venue: Some(Venue {
            ground: "Ground".into(),
            city: Some("City".into()),
        }),
        start_time: Some(chrono::DateTime::<chrono::Utc>::UNIX_EPOCH),
        state: MatchState::Upcoming,
        status: Some("Match starts soon".into()),
        url: Url::parse("https://www.cricbuzz.com/live-cricket-scores/0/sample")
            .unwrap_or_else(|_| unreachable!("constant URL")),
    }
}
