// Package frame reads and writes the JSON-RPC 2.0 messages of MCP's stdio
// transport as bytes: one message per line. It is the framing and envelope
// of the use_tool relay, the one hot path the workbench does not hand to
// the MCP SDK, whose decoding costs more than a whole proxied call should.
//
// Decoding goes through github.com/segmentio/encoding/json (the SDK's own
// JSON library) without copying: what [Parse] returns aliases the line, so
// a line must not be reused while its message is in use. Lines from
// [Reader.Next] are each a slice of their own.
package frame

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	sj "github.com/segmentio/encoding/json"
)

// JSON-RPC 2.0 error codes.
const (
	codeParseError     = -32700
	CodeInvalidRequest = -32600
)

// ErrTooLong is a line longer than a Reader's limit: errors.Is holds for
// every [TooLongError].
var ErrTooLong = errors.New("message longer than the line limit")

// TooLongError is a line longer than a Reader's limit. Next reports it
// as soon as the line passes the limit (Ended false: the line may never
// end), and again once its end has been read and skipped (Ended true);
// once only, with Ended true, when both happen in one read.
type TooLongError struct {
	Limit int    // the line's limit, in bytes: the Reader's, or what LimitFor gave it
	Head  []byte // the line's first bytes (up to 4 KiB)
	Tail  []byte // its last bytes (up to 4 KiB), once Ended
	Ended bool

	id    json.RawMessage // the top-level id read on the way, if any
	inner *innerScan      // a message that began inside the line, while it is read
	// cut: the line ended in a message written inside it (see Next),
	// so Tail is that message's end, not the line's.
	cut bool
}

func (e *TooLongError) Error() string        { return ErrTooLong.Error() }
func (e *TooLongError) Is(target error) bool { return target == ErrTooLong }

// ID returns the id of the message the line holds, when the line shows
// one at the top level of a JSON object in the bytes read before the
// limit (wherever it stands there), or in its last bytes once it has
// ended; else nil. A line that ended in a message written inside it lost
// its own end: its last bytes are that message's, whose id is not the
// line's (a server that writes the id last, as the TypeScript SDK does,
// would have the other message's call fail in its place).
func (e *TooLongError) ID() json.RawMessage {
	if e.id != nil {
		return e.id
	}
	if id := TopLevelID(e.Head); id != nil {
		return id
	}
	if e.Ended && !e.cut {
		return tailID(e.Tail)
	}
	return nil
}

// keep is how much of a long line's head and tail a Reader keeps.
const keep = 4 << 10

// Reader reads newline-delimited messages.
type Reader struct {
	r    *bufio.Reader
	max  int
	skip *TooLongError // the long line being skipped, if any
	next []byte        // a message found at the end of a long line, next to return

	// LimitFor, when set, may lower the limit of a line longer than the
	// Reader's buffer, once the line has shown its top-level id: a
	// result of 1 or more is the line's limit (the Reader's own limit
	// still holds above it). It is called on the reading goroutine, at
	// most once per line. Set it before the first Next.
	LimitFor func(id json.RawMessage) int
}

// bufSize is the Reader's buffer: a line that fits is read in one piece.
const bufSize = 64 << 10

// NewReader returns a Reader of r whose lines may be up to max bytes.
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, bufSize), max: max}
}

// Next returns the next line that is not blank, without its line ending and
// surrounding space, in a slice of its own. A line longer than the limit is
// skipped and reported as a *[TooLongError] (see there); the next call
// after its last report reads the line after it. At the end of the input
// Next returns io.EOF, after any last line that had no newline.
//
// A server that writes a long line in pieces may write another message
// before the line's end, and end its own line with that message's newline
// (a Node server answering a request while it waits for 'drain' between
// the pieces of another answer). When a line too long to read ends in a
// whole message that began inside it, Next returns that message as the
// next line after the line's last report, so that its caller is answered;
// [SplitInterleaved] does the same for a line within the limit.
func (r *Reader) Next() ([]byte, error) {
	for {
		if r.next != nil {
			line := r.next
			r.next = nil
			return line, nil
		}
		if r.skip != nil {
			return nil, r.skipLong()
		}
		line, err := r.line()
		if errors.Is(err, ErrTooLong) {
			return nil, err
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (r *Reader) line() ([]byte, error) {
	frag, err := r.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		if err != nil && len(frag) == 0 {
			return nil, err
		}
		if len(frag) > r.max {
			var scan idScan
			return nil, &TooLongError{Limit: r.max, Head: bytes.Clone(frag[:min(len(frag), keep)]), Tail: lastBytes(nil, bytes.TrimSpace(frag)), Ended: true, id: scan.feed(frag)}
		}
		// frag aliases the reader's buffer: copy before the next read.
		return append([]byte(nil), frag...), nil
	}
	// A long line. Its pieces are copied as they come and joined once
	// at its end: a line grown by append would take several times its
	// size on the way. Its top-level id is looked for as it passes, so
	// that a line past the limit can say whose answer it was.
	var (
		pieces [][]byte
		n      int
		scan   idScan
		limit  = r.max
		asked  bool
		inner  = innerScan{max: r.max}
	)
	for {
		inner.feed(frag, n == 0)
		if !asked {
			if id := scan.feed(frag); id != nil {
				asked = true
				if r.LimitFor != nil {
					if l := r.LimitFor(id); l > 0 && l < limit {
						limit = l
					}
				}
			}
		}
		ended := !errors.Is(err, bufio.ErrBufferFull)
		if n+len(frag) > limit {
			e := &TooLongError{Limit: limit, id: scan.id, Ended: ended, inner: &inner}
			if len(pieces) > 0 {
				e.Head = bytes.Clone(pieces[0][:min(len(pieces[0]), keep)])
				e.Tail = lastBytes(nil, pieces[len(pieces)-1])
			} else {
				e.Head = bytes.Clone(frag[:min(len(frag), keep)])
			}
			e.Tail = lastBytes(e.Tail, frag)
			if ended {
				e.Tail = bytes.TrimSpace(e.Tail)
				r.next = inner.message()
				e.cut = r.next != nil
			} else {
				// Report it now: the rest may never come.
				r.skip = e
			}
			return nil, e
		}
		if ended {
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			line := make([]byte, 0, n+len(frag))
			for _, p := range pieces {
				line = append(line, p...)
			}
			return append(line, frag...), nil
		}
		pieces = append(pieces, bytes.Clone(frag))
		n += len(frag)
		frag, err = r.r.ReadSlice('\n')
	}
}

// skipLong reads to the end of the long line being skipped, keeping its
// last bytes, and reports it ended.
func (r *Reader) skipLong() error {
	e := r.skip
	for {
		frag, err := r.r.ReadSlice('\n')
		e.Tail = lastBytes(e.Tail, frag)
		e.inner.feed(frag, false)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return err // the line stays unfinished: the input broke
		}
		r.skip = nil
		e.Tail = bytes.TrimSpace(e.Tail)
		e.Ended = true
		r.next = e.inner.message()
		e.cut = r.next != nil
		return e
	}
}

// lastBytes returns the last keep bytes of tail followed by more, reusing
// tail's array.
func lastBytes(tail, more []byte) []byte {
	if len(more) >= keep {
		return append(tail[:0], more[len(more)-keep:]...)
	}
	if over := len(tail) + len(more) - keep; over > 0 {
		tail = tail[:copy(tail, tail[over:])]
	}
	return append(tail, more...)
}

// messageStarts are how the JSON-RPC messages that MCP SDKs write begin:
// most put "jsonrpc" first; the TypeScript SDK writes a response's
// "result" (or "error") first, then "jsonrpc" and "id", and a request's
// or a notification's "method". Inside a JSON string a quote is escaped,
// so these bytes stand in a line only where an object begins.
var messageStarts = [][]byte{[]byte(`{"jsonrpc"`), []byte(`{"result"`), []byte(`{"method"`), []byte(`{"error"`), []byte(`{"id"`)}

// maxStartLen is the length of the longest of messageStarts.
const maxStartLen = len(`{"jsonrpc"`)

var objectStart = []byte(`{"`)

// startsMessage reports whether b begins as a message does.
func startsMessage(b []byte) bool {
	for _, s := range messageStarts {
		if bytes.HasPrefix(b, s) {
			return true
		}
	}
	return false
}

// lastMessageStart returns the offset of the last place in b where a
// message begins, or -1.
func lastMessageStart(b []byte) int {
	for end := len(b); end > 0; {
		i := bytes.LastIndex(b[:end], objectStart)
		if i < 0 {
			return -1
		}
		if startsMessage(b[i:]) {
			return i
		}
		end = i
	}
	return -1
}

// partialStart returns how many of b's last bytes are the beginning of a
// message start that b cuts short, or 0.
func partialStart(b []byte) int {
	for n := min(maxStartLen-1, len(b)); n > 0; n-- {
		end := b[len(b)-n:]
		for _, s := range messageStarts {
			if len(s) > n && bytes.HasPrefix(s, end) {
				return n
			}
		}
	}
	return 0
}

// innerScan keeps the bytes of a long line from the last place where a
// message begins inside it (not at its start), as the line passes in
// pieces: what another message written before the line's end leaves.
// Only what fits in max is kept.
type innerScan struct {
	max   int
	carry []byte // the last piece's end, when it may be a message start cut short
	kept  []byte // the line from the last message start on; nil: none
}

// feed reads the line's next piece; first says it is the line's first.
func (c *innerScan) feed(frag []byte, first bool) {
	i := lastMessageStart(frag)
	if first && i >= 0 && len(bytes.TrimSpace(frag[:i])) == 0 {
		i = -1 // the line's own start, the first in it: no other
	}
	switch {
	case i >= 0:
		c.kept = append(c.kept[:0], frag[i:]...)
	case len(c.carry) > 0 && c.startsAcross(frag):
		c.kept = append(append(c.kept[:0], c.carry...), frag...)
	case c.kept == nil:
	case len(c.kept)+len(frag) > c.max:
		c.kept = nil // too long to keep: it is lost with the line
	default:
		c.kept = append(c.kept, frag...)
	}
	c.carry = append(c.carry[:0], frag[len(frag)-partialStart(frag):]...)
}

// startsAcross reports whether the carried end of the last piece and the
// beginning of frag make a message start.
func (c *innerScan) startsAcross(frag []byte) bool {
	var b [2 * maxStartLen]byte
	joined := append(append(b[:0], c.carry...), frag[:min(len(frag), maxStartLen)]...)
	return startsMessage(joined)
}

// message returns what was kept, once the line has ended, when it is a
// whole JSON value: a message written inside the line, which ended it.
func (c *innerScan) message() []byte {
	m := bytes.TrimSpace(c.kept)
	c.kept = nil
	if len(m) == 0 || !json.Valid(m) {
		return nil
	}
	return m
}

// SplitInterleaved splits a line that is not valid JSON into the start of
// a message (head) and a whole message written inside it (msg), the line's
// end: what a server that wrote a message before the end of another's line
// leaves. A message inside a valid one cannot end the line as a whole JSON
// value, so msg is never part of a message that was whole. Both are nil
// when the line does not end in such a message.
func SplitInterleaved(line []byte) (head, msg []byte) {
	end := len(line)
	for tries := 0; tries < 8; tries++ {
		i := lastMessageStart(line[:end])
		if i <= 0 {
			break
		}
		if json.Valid(line[i:]) {
			return line[:i], line[i:]
		}
		end = i
	}
	return nil, nil
}

// Message is the envelope of one JSON-RPC message. Its fields alias the
// line it was parsed from. A request has Method and ID, a notification
// Method alone, a response ID and Result or Error.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// IsRequest reports whether m is a request (it expects a response).
func (m *Message) IsRequest() bool { return m.Method != "" && len(m.ID) > 0 }

// IsResponse reports whether m is a response.
func (m *Message) IsResponse() bool { return m.Method == "" && len(m.ID) > 0 }

// flags parse without copying and match keys exactly, as JSON-RPC names them.
const flags = sj.ZeroCopy | sj.DontMatchCaseInsensitiveStructFields

// Unmarshal decodes the JSON value data into v, as encoding/json would but
// with keys matched exactly. Strings and raw values in v alias data.
func Unmarshal(data []byte, v any) error {
	rest, err := sj.Parse(data, v, flags)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("invalid character %q after the JSON value", rest[0])
	}
	return nil
}

// Decode decodes the JSON value data into Go's generic values, numbers as
// json.Number: the form a JSON Schema validator takes.
func Decode(data []byte) (any, error) {
	if at := TooDeepAt(data); at >= 0 {
		return nil, fmt.Errorf("the JSON value nests objects and arrays deeper than %d levels", MaxDepth)
	}
	var v any
	rest, err := sj.Parse(data, &v, sj.UseNumber|sj.ZeroCopy)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("invalid character %q after the JSON value", rest[0])
	}
	return v, nil
}

// MaxDepth bounds the nesting of the JSON values the workbench decodes
// whole (tool arguments, configuration files): the decoders' time and
// memory grow with the square of the depth. Real values stay far below it.
const MaxDepth = 1000

// MaxMessageDepth bounds the nesting of a whole JSON-RPC message, checked
// before any parser sees it: the parsers recurse once per level, so a deep
// enough line would overflow the stack, and cost time and memory with the
// square of the depth before that. It is encoding/json's own limit, far
// above MaxDepth, so that a value too deep to decode whole still reaches
// the check that refuses it as a tool error, not a protocol error.
const MaxMessageDepth = 10 * MaxDepth

// TooDeepAt returns the offset in data of the first object or array nested
// deeper than MaxDepth, or -1. It costs little for data with fewer
// brackets than that, which is nearly all.
func TooDeepAt(data []byte) int { return tooDeepAt(data, MaxDepth) }

// tooDeepAt is TooDeepAt for any limit: one pass over data, strings and
// their escapes skipped, no recursion.
func tooDeepAt(data []byte, limit int) int {
	if bytes.Count(data, []byte{'{'})+bytes.Count(data, []byte{'['}) <= limit {
		return -1
	}
	depth, inString, escaped := 0, false, false
	for i, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > limit {
				return i
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return -1
}

// ErrTooDeep is a message nested deeper than MaxMessageDepth: errors.Is
// holds for the [ParseError] that refuses it.
var ErrTooDeep = fmt.Errorf("the message nests objects and arrays deeper than %d levels", MaxMessageDepth)

// TopLevelID returns the value of the "id" key of the JSON object that data
// starts with, when it is a string or a number written whole in data, or
// nil. It reads data in one pass without parsing it, so it works on lines
// too deep to parse and on the first bytes of lines too long to read.
func TopLevelID(data []byte) json.RawMessage {
	var s idScan
	return s.feed(data)
}

// idScan finds the top-level "id" of a JSON object given in pieces, one
// byte at a time, without parsing it: [TopLevelID] for a line read in
// pieces, which may be too long to hold. It stops at the id, at the end
// of the object, or at anything that is not an object.
type idScan struct {
	started, done     bool
	depth             int
	inString, escaped bool
	expectKey         bool // a string at depth 1 here is a key
	key               bool // the string being read is a key at depth 1
	keyLen            int  // its bytes so far
	keyIsID           bool // they read "id" so far
	afterID           int  // 1: the key "id" was read; 2: and its colon
	value             []byte
	valueIsString     bool
	id                json.RawMessage
}

// maxIDLen bounds an id the scan keeps: longer ones are not looked for.
const maxIDLen = 1 << 10

// feed reads data, the object's next bytes, and returns its id once found.
func (s *idScan) feed(data []byte) json.RawMessage {
	for i := 0; i < len(data) && !s.done; i++ {
		c := data[i]
		switch {
		case s.value != nil:
			s.readValue(c)
		case s.inString:
			switch {
			case s.escaped:
				s.escaped, s.keyIsID = false, false
				s.keyLen++
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
				if s.key && s.keyIsID && s.keyLen == 2 {
					s.afterID = 1
				}
				s.key = false
			case s.key:
				s.keyIsID = s.keyIsID && s.keyLen < 2 && c == "id"[s.keyLen]
				s.keyLen++
			}
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		case !s.started:
			s.started, s.done = true, c != '{'
			s.depth, s.expectKey = 1, true
		case s.afterID == 1:
			s.afterID, s.done = 2, c != ':'
		case s.afterID == 2:
			// A string or a number; any other id is not one to answer.
			s.done = c != '"' && c != '-' && (c < '0' || c > '9')
			s.value, s.valueIsString = append(make([]byte, 0, 16), c), c == '"'
		case c == '"':
			s.inString, s.key = true, s.depth == 1 && s.expectKey
			s.keyLen, s.keyIsID, s.expectKey = 0, true, false
		case c == '{' || c == '[':
			s.depth++
			s.expectKey = false
		case c == '}' || c == ']':
			s.depth--
			s.done = s.depth <= 0
		case c == ',':
			s.expectKey = s.depth == 1
		}
	}
	return s.id
}

// readValue reads c, the next byte of the id's value.
func (s *idScan) readValue(c byte) {
	switch {
	case len(s.value) > maxIDLen:
		s.done = true
	case s.valueIsString:
		s.value = append(s.value, c)
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.id, s.done = s.value, true
		}
	case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',' || c == '}':
		s.id, s.done = s.value, true
	default:
		s.value = append(s.value, c)
	}
}

// tailID returns the value of the top-level "id" key that the last bytes
// of a JSON object show (servers written with some SDKs put the id last),
// or nil. It reads backwards from the object's closing brace: outside a
// string a quote ends one, and inside one a quote preceded by an even
// number of backslashes starts it.
func tailID(data []byte) json.RawMessage {
	data = bytes.TrimRight(data, " \t\r\n")
	if len(data) == 0 || data[len(data)-1] != '}' {
		return nil
	}
	depth := 0
	var value []byte // the last scalar read at depth 1
	for i := len(data) - 1; i >= 0; i-- {
		switch c := data[i]; {
		case c == '"':
			start := stringStart(data, i)
			if start < 0 {
				return nil
			}
			if depth == 1 {
				// A key if a colon follows it, else a value.
				rest := bytes.TrimLeft(data[i+1:], " \t\r\n")
				if len(rest) > 0 && rest[0] == ':' {
					if string(data[start:i+1]) == `"id"` {
						return value
					}
					value = nil
				} else {
					value = data[start : i+1]
				}
			}
			i = start
		case c == '}' || c == ']':
			depth++
			value = nil
		case c == '{' || c == '[':
			if depth--; depth <= 0 {
				return nil
			}
		case depth == 1 && (c == '-' || c >= '0' && c <= '9' || c == '.' || c == '+' || c == 'e' || c == 'E'):
			end := i + 1
			for i > 0 && bytes.IndexByte([]byte("-+.eE0123456789"), data[i-1]) >= 0 {
				i--
			}
			value = data[i:end]
		case depth == 1 && c >= 'a' && c <= 'z': // true, false, null
			value = nil
		}
	}
	return nil
}

// TailID returns the value of the top-level "id" key that data, the last
// bytes of a JSON object, show, or nil: the end of a message whose start
// another message, written inside it, cut off shows whose it was, when
// its server writes the id last (as the TypeScript SDK does).
func TailID(data []byte) json.RawMessage { return tailID(data) }

// stringStart returns the offset of the quote that starts the JSON string
// ending at data[end], or -1.
func stringStart(data []byte, end int) int {
	for i := end - 1; i >= 0; i-- {
		if data[i] != '"' {
			continue
		}
		n := 0
		for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i
		}
	}
	return -1
}

// ParseError is a line that is not a valid JSON-RPC message. Code says
// which: not JSON at all (codeParseError), or JSON that is not a message
// (CodeInvalidRequest). ID is the message's id when one could be read.
type ParseError struct {
	Code int
	ID   json.RawMessage
	Msg  string
	err  error // ErrTooDeep, or nil
}

func (e *ParseError) Error() string { return e.Msg }
func (e *ParseError) Unwrap() error { return e.err }

// Parse reads the envelope of one message. The line must be a whole JSON
// object: a batch, or JSON-RPC that is not 2.0, is refused. So is a line
// nested deeper than MaxMessageDepth, before any parser sees it: its
// ParseError holds ErrTooDeep (errors.Is) and the id, when the line shows
// one at its top level.
func Parse(line []byte, m *Message) error {
	*m = Message{}
	if tooDeepAt(line, MaxMessageDepth) >= 0 {
		return &ParseError{Code: codeParseError, ID: TopLevelID(line), Msg: ErrTooDeep.Error(), err: ErrTooDeep}
	}
	if len(line) == 0 || line[0] != '{' {
		switch {
		case !sj.Valid(line):
			return errNotJSON()
		case line[0] == '[':
			return &ParseError{Code: CodeInvalidRequest, Msg: "JSON-RPC batches are not supported"}
		}
		return &ParseError{Code: CodeInvalidRequest, Msg: "a JSON-RPC message must be a JSON object"}
	}
	// One pass: the parser checks the whole line as it decodes the
	// envelope, the values it keeps raw included.
	rest, err := sj.Parse(line, m, flags)
	if err != nil || len(rest) != 0 {
		*m = Message{}
		var syntax *sj.SyntaxError
		if err == nil || errors.As(err, &syntax) {
			return errNotJSON()
		}
		return &ParseError{Code: CodeInvalidRequest, Msg: "the message's envelope does not decode: " + Explain(err)}
	}
	id := m.ID
	if !validID(id) {
		m.ID = nil
		return &ParseError{Code: CodeInvalidRequest, Msg: "a JSON-RPC id must be a string or a number"}
	}
	if isNull(id) {
		m.ID = nil
		if m.Method != "" {
			// JSON-RPC allows it, MCP does not; and a request without an id
			// would get no answer.
			return &ParseError{Code: CodeInvalidRequest, Msg: "a request's id must be a string or a number, not null"}
		}
	}
	switch {
	case m.JSONRPC != "2.0":
		return &ParseError{Code: CodeInvalidRequest, ID: m.ID, Msg: `the message lacks "jsonrpc": "2.0"`}
	case m.Method == "" && len(m.ID) == 0 && (m.Result != nil || m.Error != nil):
		return nil // a response to an id that could not be read: the SDK reports it
	case m.Method == "" && len(m.ID) == 0:
		return &ParseError{Code: CodeInvalidRequest, Msg: "the message is neither a request, a notification nor a response"}
	case m.Method == "" && m.Result == nil && m.Error == nil:
		return &ParseError{Code: CodeInvalidRequest, ID: m.ID, Msg: `the message has an id but neither "method" nor "result" nor "error"`}
	}
	return nil
}

func errNotJSON() error {
	return &ParseError{Code: codeParseError, Msg: "the message is not valid JSON"}
}

func validID(id json.RawMessage) bool {
	if len(id) == 0 || isNull(id) {
		return true
	}
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return false
}

// IDKey is a JSON-RPC id as a map key: the same for every spelling of one
// id, as the SDK compares ids (7, 7.0 and 7e0; "a" and "\u0061"), and
// never the same for a string and a number ("7" and 7). The ids hosts
// send, plain integers and strings without escapes, are their own key.
func IDKey(id json.RawMessage) string {
	switch {
	case len(id) == 0:
		return ""
	case id[0] == '"':
		if bytes.IndexByte(id, '\\') >= 0 {
			var s string
			if Unmarshal(id, &s) == nil {
				return Quote(s)
			}
		}
	case bytes.ContainsAny(id, ".eE"):
		if f, err := strconv.ParseFloat(string(id), 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			return strconv.FormatInt(int64(f), 10)
		}
	}
	return string(id)
}

func isNull(b json.RawMessage) bool { return len(b) == 4 && string(b) == "null" }

// AppendResponse appends a response frame, newline included, that answers
// id with result; both are JSON values and are copied as they are.
func AppendResponse(dst, id, result []byte) []byte {
	dst = slices.Grow(dst, len(id)+len(result)+40)
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, "}\n"...)
}

// AppendError appends an error response frame for id (null when nil).
func AppendError(dst, id []byte, code int, msg string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, msg)
	return append(dst, "}}\n"...)
}

// AppendErrorObject appends an error response frame for id whose error is
// obj, a JSON-RPC error object copied as it is.
func AppendErrorObject(dst, id, obj []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":`...)
	dst = append(dst, obj...)
	return append(dst, "}\n"...)
}

// AppendNotification appends a notification frame; params is a JSON object.
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = AppendString(dst, method)
	dst = append(dst, `,"params":`...)
	dst = append(dst, params...)
	return append(dst, "}\n"...)
}

func appendID(dst, id []byte) []byte {
	if len(id) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

// AppendArray appends a JSON array of the values, each already JSON.
func AppendArray[V ~[]byte](dst []byte, values []V) []byte {
	dst = append(dst, '[')
	for i, v := range values {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, v...)
	}
	return append(dst, ']')
}

// AppendString appends s as a JSON string.
func AppendString(dst []byte, s string) []byte {
	return sj.AppendEscape(dst, s, 0)
}

// Quote returns s as a JSON string.
func Quote(s string) string { return string(AppendString(nil, s)) }

// Explain turns a JSON decoding error into words for a user or a model:
// what was expected where, never the Go types it was decoded into.
func Explain(err error) string {
	var te *sj.UnmarshalTypeError
	if errors.As(err, &te) {
		where := ""
		if te.Field != "" {
			where = fmt.Sprintf(" at %q", te.Field)
		}
		return fmt.Sprintf("expected %s%s, got %s", jsonKind(te.Type.Kind().String()), where, valueKind(te.Value))
	}
	var se *sj.SyntaxError
	if errors.As(err, &se) {
		// The message, without the decoder's prefix or the input that
		// segmentio's decoder appends after a colon.
		msg, _, _ := strings.Cut(strings.TrimPrefix(se.Error(), "json: "), ": ")
		return fmt.Sprintf("not valid JSON at byte %d: %s", se.Offset, msg)
	}
	return explainText(err.Error())
}

// unmarshalText is a JSON decoder's type error in a text: "json: cannot
// unmarshal X into Go struct field T.f of type Y" (T may hold spaces) or
// "into Go value of type Y", where X is a JSON kind (encoding/json) or a
// quoted piece of the input (segmentio's decoder, which the MCP SDK uses).
var unmarshalText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`json: cannot unmarshal ("(?:[^"\\]|\\.)*"|\w+(?: [-+.\w]+)?) into Go (?:struct field .*?\.([\w-]+)|value) of type (\S*interface \{\}|\S+)`)
})

// ExplainError is err's text with the JSON decoding error in it said as
// Explain says it. When the error is in err's chain, what its text holds
// after it is dropped (the MCP SDK's and oauthex's errors end with the
// input, which may hold a secret); otherwise the text is rewritten as
// explainText does.
func ExplainError(err error) string {
	msg := err.Error()
	var te *sj.UnmarshalTypeError
	var se *sj.SyntaxError
	var inner error
	switch {
	case errors.As(err, &te):
		inner = te
	case errors.As(err, &se):
		inner = se
	default:
		return explainText(msg)
	}
	prefix := ""
	if i := strings.Index(msg, inner.Error()); i >= 0 {
		prefix = explainText(msg[:i])
	}
	return prefix + Explain(inner)
}

// unmarshalingInto is the MCP SDK's preface to a decoding error: the input
// and the Go type it was decoded into.
var unmarshalingInto = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`unmarshaling "(?:[^"\\]|\\.)*" into an? \*?[\w.]+: `)
})

// explainText rewrites the JSON type errors in an error's text as Explain
// words them: for errors that reach us as text only (the MCP SDK flattens
// its own).
func explainText(msg string) string {
	msg = unmarshalingInto().ReplaceAllString(msg, "")
	return unmarshalText().ReplaceAllStringFunc(msg, func(m string) string {
		s := unmarshalText().FindStringSubmatch(m)
		got := valueKind(s[1])
		where := ""
		if s[2] != "" {
			where = fmt.Sprintf(" at %q", s[2])
		}
		return fmt.Sprintf("expected %s%s, got %s", goTypeKind(s[3]), where, got)
	})
}

// goTypeKind names the JSON a Go type (as an error writes it) is decoded
// from.
func goTypeKind(t string) string {
	t = strings.TrimLeft(t, "*")
	switch {
	case strings.HasPrefix(t, "[]"):
		return jsonKind("slice")
	case strings.HasPrefix(t, "map["):
		return jsonKind("map")
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return jsonKind("int")
	case t == "string", t == "bool":
		return jsonKind(t)
	}
	return jsonKind("struct")
}

// valueKind names the kind of JSON a decoder's type error says came: a
// quoted piece of the input (segmentio's decoder) or the kind's name
// (encoding/json: "string", "number 300" for a number out of range).
func valueKind(v string) string {
	if f := strings.Fields(v); len(f) > 0 && !strings.HasPrefix(v, `"`) {
		switch f[0] {
		case "number":
			if len(f) > 1 {
				return "a number out of its range"
			}
			return jsonKind(f[0])
		case "string", "object", "array", "bool", "null":
			return jsonKind(f[0])
		}
	}
	return kindOf(v)
}

// kindOf names the kind of the JSON value that raw starts with (the
// decoder's error holds the rest of the input from the value on).
func kindOf(raw string) string {
	if u, err := strconv.Unquote(raw); err == nil {
		raw = u // segmentio's error quotes it
	}
	raw = strings.TrimLeft(raw, " \t\r\n")
	if raw == "" {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	}
	return "a number"
}

func jsonKind(goKind string) string {
	switch goKind {
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool", "boolean":
		return "true or false"
	case "object":
		return "an object"
	case "null":
		return "null"
	case "ptr", "interface":
		return "a value"
	}
	return "a number"
}
