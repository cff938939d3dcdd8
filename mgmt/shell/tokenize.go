package shell

import (
	"errors"
	"strings"
)

// MaxLine is the longest command line the shell accepts (bytes).
const MaxLine = 4096

// Syntax errors of Tokenize.
var (
	ErrLineTooLong    = errors.New("line too long")
	ErrUnterminated   = errors.New("unterminated quoted string")
	ErrTrailingEscape = errors.New("backslash at end of line")
)

// Tokenize splits a command line into commands (separated by ';') of
// words, following the POSIX shell's quoting rules (XCU 2.2): a backslash
// outside quotes takes the next character literally; single quotes take
// everything up to the next single quote literally; inside double quotes a
// backslash escapes only $ ` " \ (and newline), elsewhere it stays. A '#'
// that begins a word starts a comment to the end of the line. There is no
// expansion of any kind. Empty commands (";;") are dropped.
func Tokenize(line string) ([][]string, error) {
	if len(line) > MaxLine {
		return nil, ErrLineTooLong
	}
	var (
		cmds   [][]string
		words  []string
		word   strings.Builder
		inWord bool // a word has begun (possibly an empty "" one)
	)
	endWord := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
			words = nil
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			endWord()
		case c == ';':
			endCmd()
		case c == '#' && !inWord:
			i = len(line)
		case c == '\\':
			if i+1 >= len(line) {
				return nil, ErrTrailingEscape
			}
			i++
			if line[i] != '\n' { // backslash-newline is a line continuation
				word.WriteByte(line[i])
				inWord = true
			}
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, ErrUnterminated
			}
			word.WriteString(line[i+1 : i+1+end])
			inWord = true
			i += 1 + end
		case c == '"':
			inWord = true
			i++
			for ; ; i++ {
				if i >= len(line) {
					return nil, ErrUnterminated
				}
				c := line[i]
				if c == '"' {
					break
				}
				if c == '\\' && i+1 < len(line) && strings.IndexByte("$`\"\\\n", line[i+1]) >= 0 {
					i++
					if line[i] != '\n' {
						word.WriteByte(line[i])
					}
					continue
				}
				word.WriteByte(c)
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds, nil
}
