package where

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// kind is the kind of a token.
type kind int

const (
	kEOF    kind = iota // end of input
	kWord               // field name, keyword or stray text
	kString             // quoted literal; text holds the unescaped value
	kOp                 // run of the characters = ! < >
	kLParen             // (
	kRParen             // )
	kComma              // ,
)

// token is one lexical token and the byte offset where it starts.
type token struct {
	kind kind
	text string
	pos  int
}

// lexer splits a where clause into tokens, one at a time.
type lexer struct {
	s   string
	pos int
}

// next returns the next token, or an error for an unterminated quote.
func (l *lexer) next() (token, error) {
	for l.pos < len(l.s) && isSpace(l.s[l.pos]) {
		l.pos++
	}
	start := l.pos
	if start >= len(l.s) {
		return token{kind: kEOF, pos: start}, nil
	}
	switch c := l.s[start]; {
	case c == '\'':
		return l.quoted()
	case c == '(':
		return l.single(kLParen), nil
	case c == ')':
		return l.single(kRParen), nil
	case c == ',':
		return l.single(kComma), nil
	case isOpChar(c):
		return l.run(kOp, isOpChar), nil
	default:
		return l.run(kWord, isWordChar), nil
	}
}

// single returns the one-byte token at the current position.
func (l *lexer) single(k kind) token {
	t := token{kind: k, text: l.s[l.pos : l.pos+1], pos: l.pos}
	l.pos++
	return t
}

// run returns the longest token of bytes accepted by in.
func (l *lexer) run(k kind, in func(byte) bool) token {
	start := l.pos
	for l.pos < len(l.s) && in(l.s[l.pos]) {
		l.pos++
	}
	return token{kind: k, text: l.s[start:l.pos], pos: start}
}

// quoted reads a single-quoted literal, in which two quotes in a row stand
// for one quote.
func (l *lexer) quoted() (token, error) {
	start := l.pos
	var b strings.Builder
	for i := start + 1; i < len(l.s); i++ {
		c := l.s[i]
		if c != '\'' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(l.s) && l.s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		l.pos = i + 1
		return token{kind: kString, text: b.String(), pos: start}, nil
	}
	return token{}, errAt(start, "unterminated quoted value")
}

// isSpace reports whether c is ASCII white space.
func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v':
		return true
	}
	return false
}

// isOpChar reports whether c can be part of an operator.
func isOpChar(c byte) bool {
	return c == '=' || c == '!' || c == '<' || c == '>'
}

// isWordChar reports whether c can be part of a word: anything that is not
// white space, a quote, a parenthesis, a comma or an operator character.
func isWordChar(c byte) bool {
	return !isSpace(c) && !isOpChar(c) && !strings.ContainsRune("'(),", rune(c))
}

// describe names a token for an error message.
func describe(t token) string {
	switch t.kind {
	case kEOF:
		return "end of input"
	case kString:
		return "quoted value " + clip(t.text)
	}
	return clip(t.text)
}

// clip quotes s for a message, cut to at most 32 bytes on a rune boundary.
func clip(s string) string {
	const max = 32
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%q...", s[:n])
}
