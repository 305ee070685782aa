//! Reading `.env` into the environment before the command line is parsed, and saying what is
//! wrong with a malformed one without showing its values.

use super::exit::Failure;
use std::path::PathBuf;

/// Loads `.env` (from the working directory or the nearest parent that has one, as dotenvy
/// looks) without overriding the environment. Relative file paths it gives are taken from its
/// own folder, where the embedded store is kept too (see [`anchor_paths`]).
///
/// # Errors
/// A usage [`Failure`] (exit 2) saying what is wrong with the file: its line number and
/// variable name, never its value (the line may hold a secret).
pub(crate) fn load_dotenv() -> Result<(), Failure> {
    let Some(path) = find_dotenv() else {
        return Ok(());
    };
    // Named as the user would: `.env` in the working directory, else its path.
    let shown = match std::env::current_dir() {
        Ok(cwd) if path == cwd.join(".env") => ".env".to_string(),
        _ => path.display().to_string(),
    };
    let fail = |why: String| Err(Failure::usage(format!("cannot read {shown}: {why}")));
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => return fail(e.to_string()),
    };
    // A NUL byte cannot be put in the environment (the standard library panics, quoting the
    // value): refused here, by line.
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count();
        let text = String::from_utf8_lossy(&bytes);
        let name = text.lines().nth(line).map(variable_of).unwrap_or_default();
        return fail(format!("line {}{name} contains a NUL byte; remove it", line + 1));
    }
    // What the environment set before the file: those values are the caller's, relative to
    // the working directory; the file's are relative to the file's folder.
    let preset: Vec<bool> = PATH_SETTINGS.iter().map(|v| std::env::var_os(v).is_some()).collect();
    match dotenvy::from_path(&path) {
        Ok(()) => {}
        Err(e) => return fail(describe_env_error(&e, &String::from_utf8_lossy(&bytes))),
    }
    if let Some(folder) = path.parent() {
        anchor_paths(folder, &preset);
    }
    Ok(())
}

/// The settings naming a file, which a `.env` may give relative to its own folder.
const PATH_SETTINGS: [&str; 5] = [
    "STORE_PATH",
    "CHANNELS_FILE",
    "TEMPLATE_PATH",
    "REDIS_CA_FILE",
    "DATABASE_CA_FILE",
];

/// Makes the relative file paths `.env` gave (those of [`PATH_SETTINGS`] not `preset` in the
/// environment) relative to `folder`, the file's folder, and puts the embedded store there when
/// neither sets `STORE_PATH`: run from a subfolder, the bot uses the deployment's store and
/// channels file, not a second store of the subfolder's (a new user found it so).
fn anchor_paths(folder: &std::path::Path, preset: &[bool]) {
    // In the working directory, relative paths already are the file's folder's.
    if std::env::current_dir().is_ok_and(|cwd| cwd == folder) {
        return;
    }
    for (name, preset) in PATH_SETTINGS.iter().zip(preset) {
        if *preset {
            continue;
        }
        match std::env::var_os(name) {
            Some(value) => {
                let value = PathBuf::from(value);
                if value.is_relative() && !value.as_os_str().is_empty() {
                    std::env::set_var(name, folder.join(value));
                }
            }
            None if *name == "STORE_PATH" => {
                std::env::set_var(name, folder.join(cricket_announcer::config::DEFAULT_STORE_PATH));
            }
            None => {}
        }
    }
}

/// The `.env` dotenvy would load: in the working directory or its nearest ancestor.
fn find_dotenv() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    cwd.ancestors().map(|d| d.join(".env")).find(|p| p.is_file())
}

/// ` (NAME)` for a `.env` line `NAME=…` whose name is readable, else nothing (never a guess).
/// A line without `=`, or whose "name" looks like a credential, may be a pasted secret: not
/// shown.
fn variable_of(line: &str) -> String {
    let Some((v, _)) = line.split_once('=') else {
        return String::new();
    };
    let v = v.trim().trim_start_matches("export ").trim();
    if !v.is_empty()
        && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !cricket_announcer::redact::looks_like_token(v)
    {
        format!(" ({v})")
    } else {
        String::new()
    }
}

/// A malformed `.env` (whose text is `text`) described by its line number and variable name,
/// never its value.
fn describe_env_error(e: &dotenvy::Error, text: &str) -> String {
    match e {
        dotenvy::Error::LineParse(fragment, _) => {
            // The fragment is the text dotenvy was reading: from the failing line to the end
            // of the file when a quote is left open, and with its newline. Its first line is
            // the line that failed.
            let first = fragment.lines().next().unwrap_or("").trim_end();
            let found = text
                .lines()
                .enumerate()
                .find(|(_, l)| !first.is_empty() && l.contains(first));
            match found {
                Some((n, l)) => format!(
                    "line {}{} cannot be parsed (check its quotes; values with spaces need quotes)",
                    n + 1,
                    variable_of(l)
                ),
                None => "a line cannot be parsed (check its quotes; values with spaces need quotes)".to_string(),
            }
        }
        dotenvy::Error::Io(io) => io.to_string(),
        _ => "the file cannot be parsed".to_string(),
    }
}
