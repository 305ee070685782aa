//! stub
use crate::cricket::Match;
use crate::source::ParseError;
/// stub
/// # Errors
/// never
pub fn parse(_p: &str) -> Result<Vec<Match>, ParseError> { Err(ParseError::Empty) }
