//! Just enough HTTP/1.1 for the page: a request read from bytes (sans-IO), and a response
//! written to bytes. One request a connection, then the connection closes.

use crate::error::WebError;

/// The most bytes a request's line and headers may take.
pub const MAX_HEAD: usize = 8 * 1024;
/// The most bytes a request's body may take (an offer's SDP is a few kilobytes).
pub const MAX_BODY: usize = 64 * 1024;

/// A request, read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, without its query.
    pub path: String,
    /// Whether the client takes gzip (`Accept-Encoding`).
    pub gzip: bool,
    /// The body (`Content-Length` bytes of it).
    pub body: Vec<u8>,
}

impl Request {
    /// The request at the start of `buf`: `Ok(None)` while it is not all there yet, an
    /// error once it can never be one this server reads.
    pub fn parse(buf: &[u8]) -> Result<Option<Request>, WebError> {
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            return match buf.len() > MAX_HEAD {
                true => Err(WebError::BadRequest("its head is too long")),
                false => Ok(None),
            };
        };
        if end > MAX_HEAD {
            return Err(WebError::BadRequest("its head is too long"));
        }
        let head = std::str::from_utf8(&buf[..end])
            .map_err(|_| WebError::BadRequest("its head is not text"))?;
        let mut lines = head.split("\r\n");
        let mut first = lines.next().unwrap_or_default().split(' ');
        let (Some(method), Some(target), Some(version)) =
            (first.next(), first.next(), first.next())
        else {
            return Err(WebError::BadRequest("no request line"));
        };
        if !version.starts_with("HTTP/1.") || !target.starts_with('/') {
            return Err(WebError::BadRequest("not an HTTP/1 request"));
        }
        let mut length = 0usize;
        let mut gzip = false;
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                return Err(WebError::BadRequest("a header without a colon"));
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = value
                    .parse()
                    .map_err(|_| WebError::BadRequest("a bad Content-Length"))?;
            } else if name.eq_ignore_ascii_case("accept-encoding") {
                gzip = value.split(',').any(|e| e.trim().starts_with("gzip"));
            }
        }
        if length > MAX_BODY {
            return Err(WebError::BadRequest("its body is too long"));
        }
        let body_at = end + 4;
        if buf.len() < body_at + length {
            return Ok(None);
        }
        let path = target.split('?').next().unwrap_or(target);
        Ok(Some(Request {
            method: method.to_owned(),
            path: path.to_owned(),
            gzip,
            body: buf[body_at..body_at + length].to_vec(),
        }))
    }
}

/// A response's bytes: `status` (such as `200 OK`), its type, whether the body is
/// gzip-compressed, and the body.
pub fn response(status: &str, content_type: &str, gzip: bool, body: &[u8]) -> Vec<u8> {
    let encoding = match gzip {
        true => "Content-Encoding: gzip\r\n",
        false => "",
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{encoding}Content-Length: {}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::{MAX_BODY, MAX_HEAD, Request, response};

    #[test]
    fn a_request_is_read_once_it_is_all_there() {
        let whole = b"POST /rtc?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nAccept-Encoding: br, gzip\r\n\r\nhello";
        for cut in 0..whole.len() {
            assert_eq!(Request::parse(&whole[..cut]), Ok(None), "cut at {cut}");
        }
        let r = Request::parse(whole).unwrap().unwrap();
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/rtc"));
        assert!(r.gzip);
        assert_eq!(r.body, b"hello");
    }

    #[test]
    fn junk_and_oversize_requests_are_refused_not_waited_for() {
        for bad in [
            &b"GET\r\n\r\n"[..],
            b"GET / SPDY\r\n\r\n",
            b"GET nope HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
            b"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
            b"\xff\xfe / HTTP/1.1\r\n\r\n",
        ] {
            assert!(Request::parse(bad).is_err(), "{bad:?}");
        }
        let long = format!(
            "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            MAX_BODY + 1
        );
        assert!(Request::parse(long.as_bytes()).is_err());
        assert!(Request::parse(&vec![b'a'; MAX_HEAD + 1]).is_err());
    }

    #[test]
    fn a_response_says_its_length_and_encoding() {
        let r = String::from_utf8(response("200 OK", "text/plain", true, b"abc")).unwrap();
        assert!(r.starts_with("HTTP/1.1 200 OK\r\n"));
        assert!(r.contains("Content-Encoding: gzip\r\n"));
        assert!(r.contains("Content-Length: 3\r\n"));
        assert!(r.ends_with("\r\n\r\nabc"));
    }
}
