package httpd

// Status codes this server and its handlers use (RFC 9110 §15, RFC 6585
// §5 for 431).
const (
	StatusOK                          = 200
	StatusNoContent                   = 204
	StatusMovedPermanently            = 301
	StatusFound                       = 302
	StatusNotModified                 = 304
	StatusBadRequest                  = 400
	StatusForbidden                   = 403
	StatusNotFound                    = 404
	StatusMethodNotAllowed            = 405
	StatusRequestTimeout              = 408
	StatusContentTooLarge             = 413
	StatusURITooLong                  = 414
	StatusRequestHeaderFieldsTooLarge = 431
	StatusInternalServerError         = 500
	StatusNotImplemented              = 501
	StatusServiceUnavailable          = 503
	StatusHTTPVersionNotSupported     = 505
)

// StatusText is the reason phrase of code (RFC 9110 §15), "" if unknown.
func StatusText(code int) string {
	switch code {
	case StatusOK:
		return "OK"
	case StatusNoContent:
		return "No Content"
	case StatusMovedPermanently:
		return "Moved Permanently"
	case StatusFound:
		return "Found"
	case StatusNotModified:
		return "Not Modified"
	case StatusBadRequest:
		return "Bad Request"
	case StatusForbidden:
		return "Forbidden"
	case StatusNotFound:
		return "Not Found"
	case StatusMethodNotAllowed:
		return "Method Not Allowed"
	case StatusRequestTimeout:
		return "Request Timeout"
	case StatusContentTooLarge:
		return "Content Too Large"
	case StatusURITooLong:
		return "URI Too Long"
	case StatusRequestHeaderFieldsTooLarge:
		return "Request Header Fields Too Large"
	case StatusInternalServerError:
		return "Internal Server Error"
	case StatusNotImplemented:
		return "Not Implemented"
	case StatusServiceUnavailable:
		return "Service Unavailable"
	case StatusHTTPVersionNotSupported:
		return "HTTP Version Not Supported"
	}
	return ""
}
