package httpd

import (
	"bufio"
	"errors"
	"io"
)

// maxChunkSizeDigits bounds a chunk-size's hex digits: 15 keep the sum of
// the sizes within an int64 long after MaxBodyBytes has refused them.
const maxChunkSizeDigits = 15

// discardChunked reads a body in the chunked transfer coding (RFC 9112
// §7.1) from br and throws it away: each chunk-size line (its extensions
// ignored, §7.1.1), the chunk's data and the CRLF after it, the last
// chunk and the trailer section, whose fields a recipient may discard
// (§7.1.2). Lines are collected in line (returned for reuse) and bounded
// by maxLine, the trailer section as a whole too; the data by maxBody.
// Errors are *protoError for bodies to refuse, or the connection's read
// error.
func discardChunked(br *bufio.Reader, line []byte, maxLine int, maxBody int64) ([]byte, error) {
	var total int64
	for {
		var err error
		if line, err = readLine(br, line[:0], maxLine); err != nil {
			return line, chunkError(err, "chunk-size line")
		}
		size, ok := parseChunkSize(line)
		if !ok {
			return line, bad("malformed chunk-size line")
		}
		if size > maxBody-total {
			return line, &protoError{StatusContentTooLarge, "request body too large"}
		}
		total += size
		if size == 0 {
			break
		}
		if _, err := br.Discard(int(size)); err != nil {
			return line, chunkError(err, "chunk data")
		}
		if line, err = readLine(br, line[:0], maxLine); err != nil {
			return line, chunkError(err, "chunk data")
		}
		if len(line) != 0 {
			return line, bad("chunk data longer than its size")
		}
	}
	// The trailer section: field lines up to an empty one, all within
	// maxLine bytes.
	line = line[:0]
	for {
		start := len(line)
		var err error
		if line, err = readLine(br, line, maxLine); err != nil {
			if errors.Is(err, errTooLong) {
				return line, &protoError{StatusRequestHeaderFieldsTooLarge, "trailer section too large"}
			}
			return line, chunkError(err, "trailer section")
		}
		if len(line) == start {
			return line, nil
		}
		if _, err := parseField(string(line[start:])); err != nil {
			return line, err
		}
	}
}

// chunkError turns readLine's and Discard's errors in a chunked body into
// a refusal, or passes the connection's own error on.
func chunkError(err error, where string) error {
	switch {
	case errors.Is(err, errTooLong):
		return bad(where + " too long")
	case errors.Is(err, errEOF), errors.Is(err, errBareCR), errors.Is(err, io.EOF):
		return bad("incomplete or malformed " + where)
	}
	return err
}

// parseChunkSize parses chunk-size [chunk-ext]: 1*HEXDIG, then nothing or
// extensions after optional whitespace and ";" (RFC 9112 §7.1.1, BWS),
// which are ignored.
func parseChunkSize(line []byte) (int64, bool) {
	var n int64
	i := 0
	for ; i < len(line); i++ {
		d, ok := hexDigit(line[i])
		if !ok {
			break
		}
		if i == maxChunkSizeDigits {
			return 0, false
		}
		n = n<<4 | int64(d)
	}
	if i == 0 {
		return 0, false
	}
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return n, i == len(line) || line[i] == ';'
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
