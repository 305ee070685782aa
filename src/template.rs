//! Post templates (minijinja): loaded and compiled once at startup, so a bad template stops the
//! bot before it claims anything. Rendering fills the fields from a [`Match`], each cleaned by
//! [`crate::text::clean`].

use crate::cricket::{score_line, Match, MatchResult, ResultOutcome};
use crate::post::{LengthRule, SinkKind};
use crate::text::clean;
use crate::zone::Zone;
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde::Serialize;
use std::path::{Path, PathBuf};
use url::Url;

/// The template used when `TEMPLATE_PATH` is not set: `templates/announce.txt`, compiled into
/// the binary so that an installed binary works from any directory.
pub const BUILT_IN: &str = include_str!("../templates/announce.txt");

/// How the built-in template is named in logs and errors.
pub const BUILT_IN_NAME: &str = "(built-in templates/announce.txt)";

/// The template a Discord channel uses when neither it nor `TEMPLATE_PATH` names one:
/// `templates/discord.txt`, [`BUILT_IN`] with the start as Discord's timestamp markup
/// (`<t:UNIX:F>`), which each reader's client shows in the reader's own time zone and language
/// (<https://discord.com/developers/docs/reference#message-formatting-timestamp-styles>).
pub const BUILT_IN_DISCORD: &str = include_str!("../templates/discord.txt");

/// How the built-in Discord template is named in logs and errors.
pub const BUILT_IN_DISCORD_NAME: &str = "(built-in templates/discord.txt)";

/// The template of a result post when a channel names none of its own:
/// `templates/result.txt`, compiled into the binary.
pub const BUILT_IN_RESULT: &str = include_str!("../templates/result.txt");

/// How the built-in result template is named in logs and errors.
pub const BUILT_IN_RESULT_NAME: &str = "(built-in templates/result.txt)";

/// The largest template file accepted, bytes. A post is at most 280 characters; the shipped
/// templates, comments included, are under 2 KiB. The bound keeps a mistaken path (a log file,
/// `/dev/zero`) from being read without end.
pub const MAX_TEMPLATE_BYTES: u64 = 64 * 1024;

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
    /// Not a regular file (a directory, a device such as `/dev/zero`, a pipe), or larger than
    /// [`MAX_TEMPLATE_BYTES`] (a file, or a template given as text).
    #[error("cannot use template {path}: {reason}")]
    NotATemplateFile {
        /// The template's path.
        path: PathBuf,
        /// What it is instead.
        reason: String,
    },
    /// Syntax error, unknown field or filter: minijinja's message, which names the line, and
    /// the text it points at. One line: minijinja's own report of the source around the
    /// error spans several, which a one-line error on stderr or in a log would show as `\n`.
    #[error("template {path}: {source}{near}")]
    Invalid {
        /// The template's path.
        path: PathBuf,
        /// minijinja's error.
        #[source]
        source: minijinja::Error,
        /// ` near "…"`: the template text the error points at, or nothing.
        near: String,
    },
    /// The template compiles but cannot make a useful post: it renders to nothing, or it never
    /// uses `{{ link }}` (every announcement links to its match).
    #[error("template {path}: {reason}")]
    Unusable {
        /// The template's path.
        path: PathBuf,
        /// What is wrong.
        reason: &'static str,
    },
}

/// A post that could not be made from a match.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The template failed (see [`TemplateError`]).
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// Even with series, venue and description cut away, the post is over a sink's limit.
    #[error(
        "template {template}: the post for {title} ({origin}) is {length} {} even with series, venue and description cut; {} allows {}",
        limit.unit, limit.sink, limit.max
    )]
    TooLong {
        /// The template's path.
        template: String,
        /// The match: teams and description.
        title: String,
        /// Where the match was read (`site:id`).
        origin: String,
        /// The shortest post's length, in the limit's unit.
        length: usize,
        /// The sink's limit.
        limit: Box<SinkLimit>,
    },
}

/// A sink's length limit, as a [`RenderError::TooLong`] names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkLimit {
    /// The sink, as people write it (`X`, `Mastodon`…).
    pub sink: String,
    /// Its limit, in `unit`s.
    pub max: usize,
    /// What the limit counts (`graphemes`, `characters`…).
    pub unit: String,
}

/// How a channel tells its posts, beyond the template: the zone the start is told in (field
/// `start`, `timezone`) and whether it shows hashtags (field `channel_hashtags`, which the
/// built-in templates follow).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// The zone `start` is told in (UTC by default).
    pub zone: Zone,
    /// The channel's `hashtags` setting (off by default): the built-in templates print the
    /// `hashtags` field only when it is on.
    pub hashtags: bool,
}

impl From<Zone> for Style {
    fn from(zone: Zone) -> Style {
        Style { zone, hashtags: false }
    }
}

/// Why [`Template::render_fitting`] made no post.
enum Unfit {
    Template(TemplateError),
    TooLong { title: String, length: usize },
}

impl From<TemplateError> for Unfit {
    fn from(e: TemplateError) -> Unfit {
        Unfit::Template(e)
    }
}

/// A compiled post template.
#[derive(Debug)]
pub struct Template {
    env: Environment<'static>,
    path: PathBuf,
}

/// The fields a result template may use: an announcement's and the result's, documented in
/// `templates/result.txt`.
#[derive(Serialize, Clone)]
struct ResultFields {
    #[serde(flatten)]
    base: Fields,
    result: String,
    outcome: &'static str,
    winner: String,
    loser: String,
    winner_short: String,
    loser_short: String,
    margin: String,
    method: &'static str,
    team1_score: String,
    team2_score: String,
    winner_score: String,
    loser_score: String,
    line: String,
}

impl ResultFields {
    /// The fields of `m`, finished with `result`, linking to `link`, its start told in `zone`.
    fn of(m: &Match, result: &MatchResult, link: &Url, zone: Zone) -> ResultFields {
        let base = Fields::of(m, link, Style::from(zone));
        let scores = [score_line(&result.scores[0]), score_line(&result.scores[1])];
        let (shorts, names) = (
            [base.team1_short.clone(), base.team2_short.clone()],
            [base.team1.clone(), base.team2.clone()],
        );
        let method = result.method.map(crate::cricket::Method::label).unwrap_or_default();
        let (winner, margin) = match result.outcome {
            ResultOutcome::Won { winner, margin } => (Some(winner), margin.map(|m| m.to_string()).unwrap_or_default()),
            _ => (None, String::new()),
        };
        let side = |list: &[String; 2], pick: Option<usize>| pick.map(|i| list[i].clone()).unwrap_or_default();
        let loser = winner.map(|w| 1 - w);
        let sentence = match winner {
            Some(w) => {
                let mut s = format!("{} beat {}", names[w], names[1 - w]);
                if !margin.is_empty() {
                    s.push_str(&format!(" by {margin}"));
                }
                if !method.is_empty() {
                    s.push_str(&format!(" ({method})"));
                }
                s
            }
            None => match result.outcome {
                ResultOutcome::Tied => "Match tied".into(),
                ResultOutcome::Drawn => "Match drawn".into(),
                ResultOutcome::NoResult => "No result".into(),
                _ => "Match abandoned".into(),
            },
        };
        ResultFields {
            result: sentence,
            outcome: result.outcome.as_str(),
            winner: side(&names, winner),
            loser: side(&names, loser),
            winner_short: side(&shorts, winner),
            loser_short: side(&shorts, loser),
            margin,
            method,
            winner_score: side(&scores, winner),
            loser_score: side(&scores, loser),
            team1_score: scores[0].clone(),
            team2_score: scores[1].clone(),
            line: clean(&result.line),
            base,
        }
    }
}

/// The fields a post's length is fitted by: an announcement's, or a result's around them.
trait Cuttable: Serialize {
    /// The announcement's fields, whose series, venue and description are cut to fit.
    fn base(&mut self) -> &mut Fields;
}

impl Cuttable for Fields {
    fn base(&mut self) -> &mut Fields {
        self
    }
}

impl Cuttable for ResultFields {
    fn base(&mut self) -> &mut Fields {
        &mut self.base
    }
}

/// The fields a template may use; documented in `templates/announce.txt`.
#[derive(Serialize, Clone)]
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
    start_utc: String,
    start_iso: String,
    start_unix: Option<i64>,
    timezone: &'static str,
    state: &'static str,
    status: String,
    site: &'static str,
    link: String,
    hashtags: String,
    channel_hashtags: bool,
}

impl Fields {
    /// The fields of `m`, linking to `link`, told in `style`.
    fn of(m: &Match, link: &Url, style: Style) -> Fields {
        let zone = style.zone;
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
            start: m.start_time.map(|t| zone.start(t)).unwrap_or_default(),
            start_utc: m.start_time.map(|t| Zone::default().start(t)).unwrap_or_default(),
            start_iso: m
                .start_time
                .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
                .unwrap_or_default(),
            start_unix: m.start_time.map(|t| t.timestamp()),
            timezone: zone.name(),
            state: m.state.as_str(),
            status: m.status.as_deref().map(clean).unwrap_or_default(),
            site: m.site.as_str(),
            link: link.to_string(),
            hashtags: crate::hashtags::hashtags(m),
            channel_hashtags: style.hashtags,
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
    /// [`TemplateError::NotATemplateFile`] when `path` is not a regular file of at most
    /// [`MAX_TEMPLATE_BYTES`] (checked before reading: a device or a pipe is never opened).
    pub fn load(path: &Path) -> Result<Template, TemplateError> {
        Template::from_source(path, Template::read_bounded(path)?)
    }

    /// The text of the template file at `path`, checked as [`Template::load`] says.
    fn read_bounded(path: &Path) -> Result<String, TemplateError> {
        use std::io::Read;
        let read = |source| TemplateError::Read {
            path: path.to_path_buf(),
            source,
        };
        let not_template = |reason: String| TemplateError::NotATemplateFile {
            path: path.to_path_buf(),
            reason,
        };
        let too_large = || not_template(format!("larger than {MAX_TEMPLATE_BYTES} bytes; is it the right file?"));
        let meta = std::fs::metadata(path).map_err(read)?;
        if !meta.is_file() {
            return Err(not_template(
                "not a regular file; set TEMPLATE_PATH to a template file".into(),
            ));
        }
        if meta.len() > MAX_TEMPLATE_BYTES {
            return Err(too_large());
        }
        // Read through the bound as well: the file may have grown since.
        let mut source = String::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_TEMPLATE_BYTES + 1).read_to_string(&mut source))
            .map_err(read)?;
        if source.len() as u64 > MAX_TEMPLATE_BYTES {
            return Err(too_large());
        }
        Ok(source)
    }

    /// The template at `path` ([`Template::load`]), or the built-in one ([`BUILT_IN`]) when
    /// `None`.
    ///
    /// # Errors
    /// As for [`Template::load`].
    pub fn configured(path: Option<&Path>) -> Result<Template, TemplateError> {
        match path {
            Some(path) => Template::load(path),
            None => Template::from_source(Path::new(BUILT_IN_NAME), BUILT_IN.to_string()),
        }
    }

    /// The template a channel posting to `sink` uses when it names none of its own: the one at
    /// `path` (`TEMPLATE_PATH`) when given, else the built-in one for the sink
    /// ([`BUILT_IN_DISCORD`] for Discord, [`BUILT_IN`] for the others).
    ///
    /// # Errors
    /// As for [`Template::load`].
    pub fn configured_for(path: Option<&Path>, sink: SinkKind) -> Result<Template, TemplateError> {
        match (path, sink) {
            (None, SinkKind::Discord) => {
                Template::from_source(Path::new(BUILT_IN_DISCORD_NAME), BUILT_IN_DISCORD.to_string())
            }
            _ => Template::configured(path),
        }
    }

    /// Compiles `source`, naming it `path` in errors; see [`Template::load`].
    ///
    /// # Errors
    /// [`TemplateError::Invalid`] as for [`Template::load`];
    /// [`TemplateError::NotATemplateFile`] when `source` is over [`MAX_TEMPLATE_BYTES`], the
    /// bound of a template file, so a template given as text (a channel's `template`) has it
    /// too.
    pub fn from_source(path: &Path, source: String) -> Result<Template, TemplateError> {
        Template::compile(path, source, Trial::Announce)
    }

    /// A result template ([`Template::render_result`]) compiled from `source`, named `path` in
    /// errors: checked as [`Template::from_source`] checks an announcement's, its trial render
    /// a finished match with a result, so a result field in an announcement's template (or an
    /// unknown one in a result's) is refused at startup.
    ///
    /// # Errors
    /// As for [`Template::from_source`].
    pub fn result_from_source(path: &Path, source: String) -> Result<Template, TemplateError> {
        Template::compile(path, source, Trial::Result)
    }

    /// The result template at `path` (read as [`Template::load`] reads), or the built-in one
    /// ([`BUILT_IN_RESULT`]) when `None`.
    ///
    /// # Errors
    /// As for [`Template::load`].
    pub fn configured_result(path: Option<&Path>) -> Result<Template, TemplateError> {
        match path {
            Some(path) => Template::result_from_source(path, Template::read_bounded(path)?),
            None => Template::result_from_source(Path::new(BUILT_IN_RESULT_NAME), BUILT_IN_RESULT.to_string()),
        }
    }

    fn compile(path: &Path, source: String, trial: Trial) -> Result<Template, TemplateError> {
        if source.len() as u64 > MAX_TEMPLATE_BYTES {
            return Err(TemplateError::NotATemplateFile {
                path: path.to_path_buf(),
                reason: format!("larger than {MAX_TEMPLATE_BYTES} bytes"),
            });
        }
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        // A loop in a loop can take minutes for one post (range(99999) twice): bounded, and
        // refused at load, where the trial render meets the bound first.
        env.set_fuel(Some(MAX_TEMPLATE_FUEL));
        // Posts are plain text: never HTML-escape, whatever the file's extension.
        env.set_auto_escape_callback(|_| AutoEscape::None);
        let name = path.display().to_string();
        // Kept for the error, which points into it; a template is at most 64 KiB.
        let text = source.clone();
        env.add_template_owned(name, source)
            .map_err(|e| invalid(path, &text, e))?;
        let template = Template {
            env,
            path: path.to_path_buf(),
        };
        let sample = sample_match();
        let text = match trial {
            Trial::Announce => template.render(&sample, &sample.url)?,
            Trial::Result => {
                let (finished, result) = sample_result();
                template.render_fields(&ResultFields::of(&finished, &result, &sample.url, Zone::default()))?
            }
        };
        let unusable = |reason| TemplateError::Unusable {
            path: path.to_path_buf(),
            reason,
        };
        if text.trim().is_empty() {
            return Err(unusable("it renders to an empty post"));
        }
        if !text.contains(sample.url.as_str()) {
            return Err(unusable("it never uses {{ link }}: every post must link to its match"));
        }
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
        self.render_fields(&Fields::of(m, link, Style::default()))
    }

    /// Renders the post for `m` with `link` and makes sure `sink` accepts its length by its
    /// `rule`: when the full post is over the rule's limit, the least important fields are cut,
    /// one at a time and each as little as needed, ending with `…`: first the hashtags (a whole
    /// tag at a time, from the last), then the series, then the venue, then the description (a
    /// field cut to nothing disappears with its line). The link
    /// and the team names are never cut. The text is the post as the sink takes it
    /// ([`LengthRule::fit`]: NFC-normalised for X).
    ///
    /// # Errors
    /// [`RenderError::Template`] when rendering fails; [`RenderError::TooLong`] (naming the
    /// template, the match and the sink's limit) when the post is still too long with series,
    /// venue and description gone.
    pub fn render_within(
        &self,
        m: &Match,
        link: &Url,
        sink: SinkKind,
        rule: LengthRule,
    ) -> Result<String, RenderError> {
        self.render_local(m, link, Style::default(), sink, rule)
    }

    /// [`Template::render_within`] told in `style`: the start in its zone (the fields `start`
    /// and `timezone`; `start_utc`, `start_iso` and `start_unix` are the same in every zone),
    /// and the channel's `hashtags` setting (field `channel_hashtags`). A [`Zone`] is a style
    /// without hashtags.
    ///
    /// # Errors
    /// As for [`Template::render_within`].
    pub fn render_local(
        &self,
        m: &Match,
        link: &Url,
        style: impl Into<Style>,
        sink: SinkKind,
        rule: LengthRule,
    ) -> Result<String, RenderError> {
        let limit = SinkLimit {
            sink: sink.platform().to_string(),
            max: rule.max(),
            unit: rule.unit().to_string(),
        };
        self.fitted(m, link, style.into(), &limit, |text| rule.fit(text))
    }

    /// The result post for `m`, finished with `result`, linking to `link`, its start told in
    /// `zone` and fitted to `sink`'s `rule` as [`Template::render_within`] fits an
    /// announcement (series, then venue, then description cut). For a template compiled by
    /// [`Template::result_from_source`].
    ///
    /// # Errors
    /// As for [`Template::render_within`].
    pub fn render_result(
        &self,
        m: &Match,
        result: &MatchResult,
        link: &Url,
        zone: Zone,
        sink: SinkKind,
        rule: LengthRule,
    ) -> Result<String, RenderError> {
        let limit = SinkLimit {
            sink: sink.platform().to_string(),
            max: rule.max(),
            unit: rule.unit().to_string(),
        };
        self.render_fitting(ResultFields::of(m, result, link, zone), |text| rule.fit(text))
            .map_err(|e| self.unfit(m, &limit, e))
    }

    /// As [`Template::render_within`], for any rule `fit`: `fit(text)` is the post
    /// when `text` is within the sink's limit, else `Err(length)` in the rule's unit. Fields
    /// are cut in the same order until it fits.
    ///
    /// # Errors
    /// [`RenderError::Template`] when rendering fails; [`RenderError::TooLong`] (naming the
    /// template, the match and the sink's rule) when the post is still too long with series,
    /// venue and description gone.
    pub fn render_for<T>(
        &self,
        m: &Match,
        link: &Url,
        rule: &SinkLimit,
        fit: impl FnMut(&str) -> Result<T, usize>,
    ) -> Result<T, RenderError> {
        self.fitted(m, link, Style::default(), rule, fit)
    }

    /// [`Template::render_for`], told in `style`.
    fn fitted<T>(
        &self,
        m: &Match,
        link: &Url,
        style: Style,
        rule: &SinkLimit,
        fit: impl FnMut(&str) -> Result<T, usize>,
    ) -> Result<T, RenderError> {
        self.render_fitting(Fields::of(m, link, style), fit)
            .map_err(|e| self.unfit(m, rule, e))
    }

    /// The error of a post of `m` that could not be made within `rule`.
    fn unfit(&self, m: &Match, rule: &SinkLimit, e: Unfit) -> RenderError {
        match e {
            Unfit::Template(e) => RenderError::Template(e),
            Unfit::TooLong { title, length } => RenderError::TooLong {
                template: self.path.display().to_string(),
                title,
                origin: m.identity().to_string(),
                length,
                limit: Box::new(rule.clone()),
            },
        }
    }

    fn render_fitting<T, F: Cuttable>(
        &self,
        mut fields: F,
        mut fit: impl FnMut(&str) -> Result<T, usize>,
    ) -> Result<T, Unfit> {
        // Named from the cleaned fields: scraped names may be 10 KB or hostile.
        let base = fields.base();
        let title = match base.description.as_str() {
            "" => base.title.clone(),
            d => format!("{}, {d}", base.title),
        };
        let mut shortest = match fit(&self.render_fields(&fields)?) {
            Ok(post) => return Ok(post),
            Err(length) => length,
        };
        // Hashtags go first, a whole tag at a time from the last: a cut tag (`#T20Wor…`) is
        // another tag.
        while !fields.base().hashtags.is_empty() {
            let tags = &mut fields.base().hashtags;
            match tags.rsplit_once(' ') {
                Some((kept, _)) => *tags = kept.to_string(),
                None => tags.clear(),
            }
            match fit(&self.render_fields(&fields)?) {
                Ok(post) => return Ok(post),
                Err(length) => shortest = length,
            }
        }
        let cuttable: [fn(&mut Fields) -> &mut String; 3] =
            [|f| &mut f.series, |f| &mut f.venue, |f| &mut f.description];
        for field in cuttable {
            let full: Vec<char> = field(fields.base()).chars().collect();
            let mut attempt = |keep: usize| -> Result<Result<T, usize>, TemplateError> {
                *field(fields.base()) = cut(&full, keep);
                Ok(fit(&self.render_fields(&fields)?))
            };
            // Largest `keep` that fits, by bisection: the length grows with `keep`.
            let mut best = match attempt(0)? {
                Ok(post) => post,
                Err(length) => {
                    shortest = length;
                    continue;
                }
            };
            let (mut lo, mut hi) = (0, full.len().saturating_sub(1));
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                match attempt(mid)? {
                    Ok(post) => {
                        best = post;
                        lo = mid;
                    }
                    Err(_) => hi = mid - 1,
                }
            }
            return Ok(best);
        }
        Err(Unfit::TooLong {
            title,
            length: shortest,
        })
    }

    fn render_fields(&self, fields: &impl Serialize) -> Result<String, TemplateError> {
        let name = self.path.display().to_string();
        let template = self.env.get_template(&name).map_err(|e| invalid(&self.path, "", e))?;
        // Written into a bounded buffer, not collected whole: fuel bounds the steps, and one
        // step can write a string of many megabytes (`{{ "x" * 99999999 }}`).
        let mut out = Bounded::default();
        let rendered = template.render_captured_to(minijinja::value::Serde(fields), &mut out);
        if out.over {
            return Err(TemplateError::Unusable {
                path: self.path.clone(),
                // MAX_RENDERED_BYTES, as a tested literal (the reason is a static text).
                reason: "it renders more than 262144 bytes for one post (a string built too large): make it simpler",
            });
        }
        rendered.map_err(|e| invalid(&self.path, template.source(), e))?;
        let raw = String::from_utf8_lossy(&out.bytes);
        let lines: Vec<&str> = raw.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        Ok(lines.join("\n"))
    }
}

/// The most bytes one rendering of a template may write: 256 KiB, far above any platform's
/// longest post (Telegram's 4,096 characters, at most 16 KiB of UTF-8) and above what a
/// [`MAX_TEMPLATE_BYTES`] template of plain fields renders to, so only a template that builds a
/// string meets it. Over it, the template is refused ([`TemplateError::Unusable`]): at load,
/// where the trial render meets it, or for the match whose fields made it so.
pub const MAX_RENDERED_BYTES: usize = 256 * 1024;

/// A template's output, kept up to [`MAX_RENDERED_BYTES`]; a write past it is refused (the
/// rendering stops with a write error) and `over` says why.
#[derive(Default)]
struct Bounded {
    bytes: Vec<u8>,
    over: bool,
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len().saturating_add(buf.len()) > MAX_RENDERED_BYTES {
            self.over = true;
            return Err(std::io::Error::other("template output over its bound"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The most steps of minijinja's engine one post may take (its "fuel",
/// <https://docs.rs/minijinja/latest/minijinja/struct.Environment.html#method.set_fuel>):
/// minijinja 3 charges one per instruction and one per 64 bytes of data it makes (output,
/// strings built by `~`, `+`, `*`, literals, filters' results), and checks an allocation of
/// known size before making it (its `src/vm/fuel.rs`). So it bounds the memory one rendering
/// builds too, to about 12.8 MB (200,000 × 64 bytes), however the strings are built; the
/// output is bounded tighter by [`MAX_RENDERED_BYTES`]. The built-in template takes under a
/// hundred; a 64 KiB template of plain fields a few thousand. Over it, the template is refused
/// at load ([`TemplateError::Unusable`]).
pub const MAX_TEMPLATE_FUEL: u64 = 200_000;

/// The most characters of template text quoted in an error.
const NEAR_CHARS: usize = 60;

/// `error` of the template at `path` whose text is `text`, told on one line: minijinja's
/// message (which names the line) and the text it points at.
fn invalid(path: &Path, text: &str, error: minijinja::Error) -> TemplateError {
    if error.kind() == minijinja::ErrorKind::OutOfFuel {
        return TemplateError::Unusable {
            path: path.to_path_buf(),
            // MAX_TEMPLATE_FUEL, as a tested literal (the reason is a static text).
            reason: "it takes more than 200000 steps to render one post (one per instruction, one per 64 bytes it builds: a loop too large, loops in loops, or a string built too large): make it simpler",
        };
    }
    let pointed = error
        .range()
        .and_then(|r| text.get(r))
        .map(str::trim)
        .filter(|t| !t.is_empty() && !t.contains('\n'));
    let near = match pointed {
        Some(t) if t.chars().count() > NEAR_CHARS => {
            format!(
                " near {:?}",
                format!("{}…", t.chars().take(NEAR_CHARS).collect::<String>())
            )
        }
        Some(t) => format!(" near {t:?}"),
        None => String::new(),
    };
    TemplateError::Invalid {
        path: path.to_path_buf(),
        source: error,
        near,
    }
}

/// The first `keep` characters of `full` followed by `…`, or nothing when `keep` is 0. The
/// whole field when `keep` covers it.
fn cut(full: &[char], keep: usize) -> String {
    if keep >= full.len() {
        return full.iter().collect();
    }
    if keep == 0 {
        return String::new();
    }
    let kept: String = full[..keep].iter().collect();
    format!("{}…", kept.trim_end_matches([' ', ',', '-', '–', '(']))
}

/// Which sample a template is tried on at load.
#[derive(Clone, Copy)]
enum Trial {
    /// An announcement's: [`sample_match`].
    Announce,
    /// A result's: [`sample_result`].
    Result,
}

/// [`sample_match`] finished, and its result, for the startup trial render of a result
/// template.
fn sample_result() -> (Match, MatchResult) {
    use crate::cricket::{Ending, Innings, MatchState};
    let mut m = sample_match();
    m.state = MatchState::Complete;
    let innings = |runs, wickets| Innings {
        runs,
        wickets: Some(wickets),
        overs: Some("20".into()),
        declared: false,
    };
    m.ending = Some(Box::new(Ending {
        line: "Home won by 7 runs".into(),
        scores: [vec![innings(176, 6)], vec![innings(169, 8)]],
        winner: None,
        ended_by: None,
    }));
    let result = MatchResult::read(&m).unwrap_or_else(|_| unreachable!("a constant result line that reads"));
    (m, result)
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
        ending: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cricket::{Team, Venue};
    use crate::post::{weighted_length, MAX_WEIGHTED_LENGTH};

    /// The post for X: `template` fitted to X's weighted 280.
    fn x_post(template: &Template, m: &Match, link: &Url) -> Result<String, RenderError> {
        template.render_within(m, link, SinkKind::X, LengthRule::XWeighted)
    }

    fn shipped(name: &str) -> Template {
        Template::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("templates").join(name)).unwrap()
    }

    fn link() -> Url {
        Url::parse("https://www.cricbuzz.com/live-cricket-scores/158062/zim-vs-ban-2nd-t20i").unwrap()
    }

    fn team(name: &str) -> Team {
        Team {
            name: name.into(),
            short_name: None,
        }
    }

    fn invalid_message(source: &str) -> String {
        match Template::from_source(Path::new("templates/bad.txt"), source.to_string()) {
            Err(e @ TemplateError::Invalid { .. }) => e.to_string(),
            other => panic!("expected an invalid template, got {other:?}"),
        }
    }

    /// `sample_match` finished with the result line `line` and scores 176/6 v 169/8.
    fn finished(line: &str) -> (Match, MatchResult) {
        let (mut m, _) = sample_result();
        if let Some(ending) = m.ending.as_mut() {
            ending.line = line.into();
        }
        let result = MatchResult::read(&m).unwrap();
        (m, result)
    }

    #[test]
    fn the_built_in_result_template_says_the_result_the_match_and_its_scores() {
        let t = Template::configured_result(None).unwrap();
        assert_eq!(t.path(), Path::new(BUILT_IN_RESULT_NAME));
        let shipped = Template::configured_result(Some(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/result.txt"),
        ))
        .unwrap();
        let (m, result) = finished("Home won by 7 runs");
        let post = |t: &Template, m: &Match, r: &MatchResult| {
            t.render_result(m, r, &link(), Zone::default(), SinkKind::X, LengthRule::XWeighted)
                .unwrap()
        };
        assert_eq!(
            post(&t, &m, &result),
            format!(
                "🏏 Home beat Away by 7 runs\nHome v Away, 1st T20I\nHOM 176/6 (20 ov)\nAWY 169/8 (20 ov)\nSeries\n{}",
                link()
            )
        );
        assert_eq!(post(&shipped, &m, &result), post(&t, &m, &result));
        let (m, dls) = finished("Away won by 2 wkts (DLS method)");
        assert!(post(&t, &m, &dls).starts_with("🏏 Away beat Home by 2 wickets (DLS)\n"));
        let (m, tied) = finished("Match tied (Home won the Super Over)");
        assert!(post(&t, &m, &tied).starts_with("🏏 Home beat Away (Super Over)\n"));
        let (m, none) = finished("No result");
        assert!(post(&t, &m, &none).starts_with("🏏 No result\n"));
    }

    #[test]
    fn a_result_field_is_refused_in_an_announcement_template_and_an_unknown_one_in_a_results() {
        let announce = Template::from_source(Path::new("a.txt"), "{{ winner }} {{ link }}".into());
        assert!(matches!(announce, Err(TemplateError::Invalid { .. })), "{announce:?}");
        let result = Template::result_from_source(Path::new("r.txt"), "{{ winner }} {{ margin }} {{ link }}".into());
        assert!(result.is_ok(), "{result:?}");
        let unknown = Template::result_from_source(Path::new("r.txt"), "{{ winner_name }} {{ link }}".into());
        assert!(matches!(unknown, Err(TemplateError::Invalid { .. })), "{unknown:?}");
        let no_link = Template::result_from_source(Path::new("r.txt"), "{{ result }}".into());
        assert!(matches!(no_link, Err(TemplateError::Unusable { .. })), "{no_link:?}");
    }

    #[test]
    fn the_built_in_template_is_the_shipped_announce_txt() {
        let built_in = Template::configured(None).unwrap();
        assert_eq!(built_in.path(), Path::new(BUILT_IN_NAME));
        assert_eq!(
            x_post(&built_in, &sample_match(), &link()).unwrap(),
            x_post(&shipped("announce.txt"), &sample_match(), &link()).unwrap()
        );
    }

    #[test]
    fn a_device_a_directory_or_an_oversized_file_is_refused_before_reading() {
        let started = std::time::Instant::now();
        let e = Template::load(Path::new("/dev/zero")).unwrap_err().to_string();
        assert_eq!(
            e,
            "cannot use template /dev/zero: not a regular file; set TEMPLATE_PATH to a template file"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            Template::load(dir.path()),
            Err(TemplateError::NotATemplateFile { .. })
        ));
        let big = dir.path().join("big.txt");
        std::fs::write(&big, "x".repeat(usize::try_from(MAX_TEMPLATE_BYTES).unwrap() + 1)).unwrap();
        assert_eq!(
            Template::load(&big).unwrap_err().to_string(),
            format!(
                "cannot use template {}: larger than 65536 bytes; is it the right file?",
                big.display()
            )
        );
    }

    #[test]
    fn an_unknown_field_fails_at_load_naming_the_path_and_line() {
        let message = invalid_message("Coming up: {{ title }}\n{{ venu }}\n{{ link }}");
        // One line, pointing at the unknown name.
        assert_eq!(
            message,
            "template templates/bad.txt: undefined value: `venu` is undefined (in templates/bad.txt:2) near \"venu\""
        );
    }

    #[test]
    fn a_template_given_as_text_has_the_cap_of_a_template_file() {
        let at_cap = format!(
            "{{{{ link }}}}{}",
            "x".repeat(usize::try_from(MAX_TEMPLATE_BYTES).unwrap() - 10)
        );
        assert!(Template::from_source(Path::new("inline"), at_cap.clone()).is_ok());
        assert_eq!(
            Template::from_source(Path::new("inline"), at_cap + "x")
                .unwrap_err()
                .to_string(),
            "cannot use template inline: larger than 65536 bytes"
        );
    }

    #[test]
    fn loops_in_loops_are_refused_at_load_and_a_full_size_template_of_fields_loads() {
        let nested =
            "{{ link }}{% for a in range(99999) %}{% for b in range(99999) %}{{ team1 }}{% endfor %}{% endfor %}";
        let error = Template::from_source(Path::new("inline"), nested.to_string()).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "template inline: it takes more than {MAX_TEMPLATE_FUEL} steps to render one post (one per instruction, one per 64 bytes it builds: a loop too large, loops in loops, or a string built too large): make it simpler"
            )
        );
        // The bound leaves room: a template file at its size cap, every field used again and
        // again, loads and renders.
        let fields = "{{ title }} {{ team1 }} v {{ team2 }}, {{ venue }} ({{ series }}) ";
        let full = format!(
            "{{{{ link }}}}{}",
            fields.repeat((usize::try_from(MAX_TEMPLATE_BYTES).unwrap() - 12) / fields.len())
        );
        assert!(full.len() as u64 <= MAX_TEMPLATE_BYTES);
        let loaded = Template::from_source(Path::new("inline"), full).unwrap();
        let sample = sample_match();
        let rendered = loaded.render(&sample, &sample.url).unwrap();
        assert!(
            rendered.len() > 40_000 && rendered.len() < MAX_RENDERED_BYTES,
            "{}",
            rendered.len()
        );
    }

    #[test]
    fn a_template_that_builds_a_huge_string_is_refused_naming_it() {
        let refuse = |source: &str| {
            let started = std::time::Instant::now();
            let error = Template::from_source(Path::new("inline"), source.to_string()).unwrap_err();
            // Refused before it is built: no second spent, no memory of its size taken.
            assert!(started.elapsed() < std::time::Duration::from_secs(2), "{source}");
            error.to_string()
        };
        let too_much_output = format!(
            "template inline: it renders more than {MAX_RENDERED_BYTES} bytes for one post (a string built too large): make it simpler"
        );
        let too_much_work = format!(
            "template inline: it takes more than {MAX_TEMPLATE_FUEL} steps to render one post (one per instruction, one per 64 bytes it builds: a loop too large, loops in loops, or a string built too large): make it simpler"
        );
        // Doubled in a loop to 512 KiB (1 MiB built in all, within the fuel): its output is
        // over the bound.
        let doubled = |times: u32| {
            format!("{{{{ link }}}}{{% set ns = namespace(s='x') %}}{{% for i in range({times}) %}}{{% set ns.s = ns.s ~ ns.s %}}{{% endfor %}}{{{{ ns.s }}}}")
        };
        assert_eq!(refuse(&doubled(19)), too_much_output);
        // Many small writes add up the same way.
        assert_eq!(
            refuse("{{ link }}{% for i in range(3000) %}{{ 'y' * 100 }}{% endfor %}"),
            too_much_output
        );
        // Built but never written (2^40 bytes, or 99 MB in one step): the fuel, which counts
        // the bytes built, stops it long before memory does.
        assert_eq!(
            refuse(&format!(
                "{}{{# #}}",
                doubled(40).replace("{{ ns.s }}", "{{ ns.s | length }}")
            )),
            too_much_work
        );
        assert_eq!(
            refuse("{{ link }}{% set s = 'x' * 99999999 %}{{ s | length }}"),
            too_much_work
        );
        // Just under the output bound renders whole.
        let under = format!("{{{{ link }}}}{{{{ 'z' * {} }}}}", MAX_RENDERED_BYTES - 200);
        let sample = sample_match();
        let text = Template::from_source(Path::new("inline"), under)
            .unwrap()
            .render(&sample, &sample.url)
            .unwrap();
        assert_eq!(text.len(), sample.url.as_str().len() + MAX_RENDERED_BYTES - 200);
    }

    #[test]
    fn a_syntax_error_fails_at_load_naming_the_path_and_line() {
        let message = invalid_message("Coming up: {{ title }}\n{% if venue %}\n{{ link }}");
        assert_eq!(
            message,
            "template templates/bad.txt: syntax error: unexpected end of input, expected end of block \
             (in templates/bad.txt:3) near \"}}\""
        );
        let message = invalid_message("Coming up: {{ title }\n{{ link }}");
        assert_eq!(
            message,
            "template templates/bad.txt: syntax error: unexpected `}`, expected end of variable block \
             (in templates/bad.txt:1) near \"}\""
        );
    }

    #[test]
    fn both_shipped_templates_load_and_render_the_sample_match_in_full() {
        let short = x_post(&shipped("announce.txt"), &sample_match(), &link()).unwrap();
        assert_eq!(
            short,
            "Coming up: Home v Away, 1st T20I\nSeries\n📍 Ground, City\n🕒 Thu 1 Jan, 00:00 UTC\n\
             https://www.cricbuzz.com/live-cricket-scores/158062/zim-vs-ban-2nd-t20i"
        );
        let detailed = x_post(&shipped("detailed.txt"), &sample_match(), &link()).unwrap();
        assert_eq!(
            detailed,
            "Coming up: Home v Away, 1st T20I (T20I)\nSeries\n📍 Ground, City\n🕒 Thu 1 Jan, 00:00 UTC\n\
             ℹ️ Match starts soon\nhttps://www.cricbuzz.com/live-cricket-scores/158062/zim-vs-ban-2nd-t20i (via cricbuzz)"
        );
    }

    #[test]
    fn only_a_live_match_says_live_and_an_unknown_one_gets_a_neutral_line() {
        use crate::cricket::MatchState;
        for (state, first) in [
            (MatchState::Live, "LIVE: Zimbabwe v Bangladesh, 1st T20I"),
            (MatchState::Upcoming, "Coming up: Zimbabwe v Bangladesh, 1st T20I"),
            (MatchState::Other, "Zimbabwe v Bangladesh, 1st T20I"),
            (MatchState::Complete, "Zimbabwe v Bangladesh, 1st T20I"),
            (MatchState::Abandoned, "Zimbabwe v Bangladesh, 1st T20I"),
        ] {
            let mut m = sample_match();
            m.teams = [team("Zimbabwe"), team("Bangladesh")];
            m.state = state;
            let post = x_post(&shipped("announce.txt"), &m, &link()).unwrap();
            assert_eq!(post.lines().next(), Some(first), "{state}");
            let detailed = x_post(&shipped("detailed.txt"), &m, &link()).unwrap();
            assert!(detailed.starts_with(first), "{state}: {}", detailed);
        }
    }

    #[test]
    fn a_hostile_ten_kilobyte_series_and_venue_are_cut_series_first_and_the_post_fits() {
        let mut m = sample_match();
        m.teams = [team("Zimbabwe"), team("Bangladesh")];
        m.series = Some("S".repeat(10_000).into());
        m.venue = Some(Venue {
            ground: "V".repeat(10_000).into(),
            city: None,
        });
        let post = x_post(&shipped("announce.txt"), &m, &link()).unwrap();
        assert!(weighted_length(&post) <= MAX_WEIGHTED_LENGTH);
        let lines: Vec<&str> = post.lines().collect();
        assert_eq!(lines[0], "Coming up: Zimbabwe v Bangladesh, 1st T20I");
        // The venue (cleaned to 120 characters + "…") is whole; only the series was cut.
        assert_eq!(lines[2], format!("📍 {}…", "V".repeat(crate::text::MAX_FIELD_CHARS)));
        assert!(lines[1].starts_with("SSSS") && lines[1].ends_with('…'), "{}", lines[1]);
        assert!(lines[1].chars().count() < crate::text::MAX_FIELD_CHARS);
        assert_eq!(lines.last().copied(), Some(link().as_str()));
        // Cut as little as needed: one more series character would not fit.
        assert!(
            weighted_length(&post) >= MAX_WEIGHTED_LENGTH - 1,
            "{}",
            weighted_length(&post)
        );
    }

    #[test]
    fn cjk_and_emoji_names_weigh_double_and_cut_series_then_venue_then_description() {
        let mut m = sample_match();
        m.teams = [team("日本代表🏏チーム"), team("香港代表🏏チーム")];
        m.series = Some("アジア選手権".repeat(20).into());
        m.venue = Some(Venue {
            ground: "横浜スタジアム".repeat(20).into(),
            city: None,
        });
        m.description = Some("第二試合".repeat(30).into());
        let post = x_post(&shipped("announce.txt"), &m, &link()).unwrap();
        assert!(
            weighted_length(&post) <= MAX_WEIGHTED_LENGTH,
            "{}",
            weighted_length(&post)
        );
        let lines: Vec<&str> = post.lines().collect();
        // Series and venue are gone entirely (their lines dropped); the description is cut.
        assert!(
            lines[0].starts_with("Coming up: 日本代表🏏チーム v 香港代表🏏チーム, 第二試合"),
            "{}",
            lines[0]
        );
        assert!(lines[0].ends_with('…'), "{}", lines[0]);
        assert!(!post.contains("アジア") && !post.contains("横浜"), "{}", post);
        assert_eq!(lines.last().copied(), Some(link().as_str()));
    }

    #[test]
    fn another_sinks_rule_cuts_the_same_fields_in_the_same_order_to_its_own_limit() {
        let mut m = sample_match();
        m.teams = [team("Zimbabwe"), team("Bangladesh")];
        let chars = |t: &str| t.chars().count();
        // A limit 20 characters above the post without its series: the series is cut, nothing else.
        m.series = Some(crate::cricket::Text::default());
        let base = chars(&shipped("announce.txt").render(&m, &link()).unwrap());
        m.series = Some("S".repeat(100).into());
        let max = base + 20;
        let limit = SinkLimit {
            sink: "test".into(),
            max,
            unit: "characters".into(),
        };
        let fit = |t: &str| {
            if chars(t) <= max {
                Ok(t.to_string())
            } else {
                Err(chars(t))
            }
        };
        let text = shipped("announce.txt").render_for(&m, &link(), &limit, fit).unwrap();
        // As long as the limit allows, and no longer: one more series character would not fit.
        assert_eq!(chars(&text), max, "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Coming up: Zimbabwe v Bangladesh, 1st T20I");
        assert!(lines[1].starts_with('S') && lines[1].ends_with('…'), "{text}");
        assert_eq!(lines.last().copied(), Some(link().as_str()));

        let tiny = |t: &str| if chars(t) <= 10 { Ok(()) } else { Err(chars(t)) };
        let err = shipped("announce.txt")
            .render_for(&m, &link(), &limit, tiny)
            .unwrap_err();
        let said = err.to_string();
        assert!(
            said.ends_with(&format!(
                "characters even with series, venue and description cut; test allows {max}"
            )),
            "{said}"
        );
        assert!(matches!(err, RenderError::TooLong { .. }), "{err:?}");
    }

    #[test]
    fn a_post_that_cannot_fit_names_the_template_and_the_match() {
        let mut m = sample_match();
        m.teams = [team(&"日".repeat(200)), team(&"本".repeat(200))];
        let err = x_post(&shipped("announce.txt"), &m, &link()).unwrap_err();
        assert!(matches!(err, RenderError::TooLong { length: 546, .. }), "{err:?}");
        let expected = format!(
            "template {}: the post for {} v {}, 1st T20I ({}) is 546 weighted characters even with series, \
             venue and description cut; X allows 280",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("templates/announce.txt")
                .display(),
            format_args!("{}…", "日".repeat(120)),
            format_args!("{}…", "本".repeat(120)),
            m.identity(),
        );
        assert_eq!(err.to_string(), expected);
    }

    #[test]
    fn the_start_is_told_in_the_channels_zone_and_the_discord_default_in_each_readers_own() {
        use crate::post::DISCORD_LENGTH;
        use chrono::TimeZone;
        let mut m = sample_match();
        // 14:30 UTC on Friday 17 July 2026: Friday evening in India, Saturday in Sydney.
        m.start_time = chrono::Utc.with_ymd_and_hms(2026, 7, 17, 14, 30, 0).single();
        let fields = Template::from_source(
            Path::new("inline"),
            "{{ start }}|{{ start_utc }}|{{ start_iso }}|{{ start_unix }}|{{ timezone }}|{{ link }}".into(),
        )
        .unwrap();
        let render = |zone: &str| {
            fields
                .render_local(
                    &m,
                    &link(),
                    Zone::parse(zone).unwrap(),
                    SinkKind::Mastodon,
                    LengthRule::default_for(SinkKind::Mastodon),
                )
                .unwrap()
        };
        let tail = "Fri 17 Jul, 14:30 UTC|2026-07-17T14:30:00Z|1784298600|";
        assert_eq!(
            render("Asia/Kolkata"),
            format!("Fri 17 Jul, 20:00 IST|{tail}Asia/Kolkata|{}", link())
        );
        assert_eq!(
            render("Australia/Sydney"),
            format!("Sat 18 Jul, 00:30 AEST|{tail}Australia/Sydney|{}", link())
        );
        // The shipped template in UTC is what it always was.
        assert!(x_post(&shipped("announce.txt"), &m, &link())
            .unwrap()
            .contains("🕒 Fri 17 Jul, 14:30 UTC"));
        // Discord's default: the timestamp markup each reader's client shows in their zone.
        let discord = Template::configured_for(None, SinkKind::Discord).unwrap();
        assert_eq!(discord.path(), Path::new(BUILT_IN_DISCORD_NAME));
        let post = discord
            .render_local(
                &m,
                &link(),
                Zone::parse("Asia/Kolkata").unwrap(),
                SinkKind::Discord,
                DISCORD_LENGTH,
            )
            .unwrap();
        assert_eq!(
            post,
            format!(
                "Coming up: Home v Away, 1st T20I\nSeries\n📍 Ground, City\n🕒 <t:1784298600:F>\n{}",
                link()
            )
        );
        // Without a start, no time line at all; TEMPLATE_PATH wins over the Discord default.
        m.start_time = None;
        let post = discord
            .render_local(&m, &link(), Zone::default(), SinkKind::Discord, DISCORD_LENGTH)
            .unwrap();
        assert!(!post.contains('🕒'), "{post}");
        let chosen = Template::configured_for(
            Some(&Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/detailed.txt")),
            SinkKind::Discord,
        )
        .unwrap();
        assert!(chosen.path().ends_with("templates/detailed.txt"));
    }

    #[test]
    fn the_built_in_templates_add_hashtags_only_for_a_channel_that_sets_them_and_cut_them_first() {
        let mut m = sample_match();
        m.teams[0].short_name = Some("IND".into());
        m.teams[1].short_name = Some("AUS".into());
        m.series = Some("ICC Men's T20 World Cup 2026".into());
        let on = Style {
            zone: Zone::default(),
            hashtags: true,
        };
        for name in ["announce.txt", "detailed.txt"] {
            let t = shipped(name);
            let plain = t
                .render_local(&m, &link(), Zone::default(), SinkKind::X, LengthRule::XWeighted)
                .unwrap();
            let tagged = t
                .render_local(&m, &link(), on, SinkKind::X, LengthRule::XWeighted)
                .unwrap();
            assert!(!plain.contains('#'), "{plain}");
            assert_eq!(tagged, format!("{plain}\n#INDvAUS #T20WorldCup"), "{name}");
        }
        // A custom template may print the field whatever the channel says.
        let custom = Template::from_source(Path::new("inline"), "{{ hashtags }} {{ link }}".into()).unwrap();
        assert_eq!(
            custom.render(&m, &link()).unwrap(),
            format!("#INDvAUS #T20WorldCup {}", link())
        );
        // Too long: the last tag goes first, whole, before any other field is cut.
        let t = shipped("announce.txt");
        let full = t
            .render_local(&m, &link(), on, SinkKind::Bluesky, LengthRule::Bluesky)
            .unwrap();
        let room = LengthRule::Bluesky.length(&full) - " #T20WorldCup".chars().count();
        let fit = |text: &str| {
            let n = LengthRule::Bluesky.length(text);
            if n <= room {
                Ok(text.to_string())
            } else {
                Err(n)
            }
        };
        let limit = SinkLimit {
            sink: "test".into(),
            max: room,
            unit: "graphemes".into(),
        };
        let cut = t.fitted(&m, &link(), on, &limit, fit).unwrap();
        assert_eq!(cut, full.replace(" #T20WorldCup", ""));
    }

    #[test]
    fn template_syntax_and_links_in_scraped_names_render_literally_and_inert() {
        let mut m = sample_match();
        m.teams = [
            team("{{ link }}{% for x in range(9) %}X{% endfor %}"),
            team("Evil https://evil.com XI"),
        ];
        m.series = Some("<b>&amp; @you</b>".into());
        let post = x_post(&shipped("announce.txt"), &m, &link()).unwrap();
        let first = post.lines().next().unwrap();
        assert_eq!(
            first,
            "Coming up: {{ link }}{% for x in range(9) %}X{% endfor %} v Evil https꞉//evil․com XI, 1st T20I"
        );
        assert_eq!(post.lines().nth(1), Some("<b>& ﹫you</b>"));
        let urls = twitter_text::extractor::Extractor::new().extract_urls(&post);
        assert_eq!(urls, vec![link().to_string()]);
    }
}
