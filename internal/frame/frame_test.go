package frame

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// readLines reads r to its end: its lines, with "(too long)" for each line
// cut because it was too long.
func readLines(t *testing.T, r *Reader) []string {
	t.Helper()
	var got []string
	for {
		line, err := r.Next()
		var tl *TooLongError
		if errors.As(err, &tl) {
			if tl.Ended {
				got = append(got, "(too long)")
			}
			continue
		}
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(line))
	}
}

func TestReaderLines(t *testing.T) {
	long := strings.Repeat("y", 100)
	r := NewReader(strings.NewReader("a\n\n  \r\nb\r\n"+long+"\nc\n"+strings.Repeat("z", 200<<10)+"\nlast"), 150<<10)
	got := readLines(t, r)
	want := []string{"a", "b", long, "c", "(too long)", "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines = %q, want %q", got, want)
	}
}

func TestReaderLinesAreTheirOwn(t *testing.T) {
	r := NewReader(strings.NewReader("first\nsecond\n"), 1<<20)
	a, _ := r.Next()
	b, _ := r.Next()
	if string(a) != "first" || string(b) != "second" {
		t.Errorf("a line changed under its reader: %q, %q", a, b)
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		line string
		code int // 0: valid
		id   string
		kind string // request, notification, response
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, "1", "request"},
		{`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{}}`, 0, `"x"`, "request"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, "", "notification"},
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, 0, "3", "response"},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}`, 0, "3", "response"},
		{`{"jsonrpc":"2.0","ID":1,"Method":"ping"}`, CodeInvalidRequest, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, codeParseError, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"} x`, codeParseError, "", ""},
		{`nope`, codeParseError, "", ""},
		{`[]`, CodeInvalidRequest, "", ""},
		{`42`, CodeInvalidRequest, "", ""},
		{`{"jsonrpc":"1.0","id":9,"method":"ping"}`, CodeInvalidRequest, "9", ""},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, CodeInvalidRequest, "", ""},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, CodeInvalidRequest, "", ""},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}`, 0, "", "notification"},
		{`{"jsonrpc":"2.0","id":9}`, CodeInvalidRequest, "9", ""},
		{`{"jsonrpc":"2.0","id":1,"method":5}`, CodeInvalidRequest, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":"\u00zz"}}`, codeParseError, "", ""},
	} {
		var m Message
		err := Parse([]byte(c.line), &m)
		if c.code == 0 {
			if err != nil {
				t.Errorf("%s: %v", c.line, err)
				continue
			}
			kind := "notification"
			if m.IsRequest() {
				kind = "request"
			} else if m.IsResponse() {
				kind = "response"
			}
			if kind != c.kind || string(m.ID) != c.id {
				t.Errorf("%s: a %s with id %s, want a %s with id %s", c.line, kind, m.ID, c.kind, c.id)
			}
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Code != c.code || string(pe.ID) != c.id {
			t.Errorf("%s: err = %v (%+v), want code %d id %q", c.line, err, pe, c.code, c.id)
		}
	}
}

func TestFramesAreJSONRPC(t *testing.T) {
	for _, f := range [][]byte{
		AppendResponse(nil, []byte(`"a"`), []byte(`{"content":[]}`)),
		AppendError(nil, nil, codeParseError, "bad \"line\"\n"),
		AppendError(nil, []byte(`7`), CodeInvalidRequest, "x"),
		AppendNotification(nil, "notifications/cancelled", []byte(`{"requestId":"wb-1"}`)),
	} {
		if f[len(f)-1] != '\n' || strings.Count(string(f), "\n") != 1 {
			t.Errorf("not one line: %q", f)
		}
		var m Message
		if err := Parse(f[:len(f)-1], &m); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestExplainSpeaksJSON(t *testing.T) {
	var v struct {
		Name *string `json:"name"`
		N    int     `json:"n"`
	}
	for _, in := range []string{`{"name": 5}`, `{"n": "x"}`, `{"name": {}}`} {
		err := Unmarshal([]byte(in), &v)
		if err == nil {
			t.Fatalf("%s decoded", in)
		}
		msg := Explain(err)
		if strings.Contains(msg, "Go ") || strings.Contains(msg, "*string") || strings.Contains(msg, "int") && !strings.Contains(msg, "number") {
			t.Errorf("%s: %q names Go types", in, msg)
		}
	}
}

// FuzzParse checks Parse against encoding/json: what Parse accepts is
// valid JSON, and an id it reads is a string or a number.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a\"b","result":{"x":[1,2,{"y":"\u00e9"}]}}`,
		`{"jsonrpc":"2.0","method":"n","params":{"a":null}}`,
		`[{"jsonrpc":"2.0"}]`, `{"jsonrpc":"2.0","id":1e400,"method":"m"}`, `{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var m Message
		if Parse(line, &m) != nil {
			return
		}
		if !json.Valid(line) {
			t.Fatalf("accepted invalid JSON: %q", line)
		}
		if len(m.ID) > 0 {
			var id any
			dec := json.NewDecoder(bytes.NewReader(m.ID))
			dec.UseNumber()
			if err := dec.Decode(&id); err != nil {
				t.Fatalf("id %q: %v", m.ID, err)
			}
			switch id.(type) {
			case string, json.Number:
			default:
				t.Fatalf("id %q is neither a string nor a number", m.ID)
			}
		}
	})
}

func TestIDKey(t *testing.T) {
	same := [][]string{
		{`7`, `7.0`, `7e0`, `70E-1`},
		{`-3`, `-3.00`},
		{`"a"`, `"\u0061"`},
		{`"7"`},
		{`7.5`},
	}
	seen := map[string]int{}
	for i, group := range same {
		for _, id := range group {
			k := IDKey(json.RawMessage(id))
			if j, ok := seen[k]; ok && j != i {
				t.Errorf("IDKey(%s) = %q, the key of another id", id, k)
			}
			seen[k] = i
			if want := IDKey(json.RawMessage(group[0])); k != want {
				t.Errorf("IDKey(%s) = %q, want %q (the key of %s)", id, k, want, group[0])
			}
		}
	}
}

func TestExplainNamesKinds(t *testing.T) {
	var in struct {
		Name *string `json:"toolbox_name"`
		On   bool    `json:"refresh"`
	}
	for doc, want := range map[string]string{
		`{"toolbox_name":5}`:                   `expected a string at "toolbox_name", got a number`,
		`{"refresh":"yes"}`:                    `expected true or false at "refresh", got a string`,
		`{"toolbox_name":{"a":1},"refresh":1}`: `expected a string at "toolbox_name", got an object`,
	} {
		if got := Explain(Unmarshal([]byte(doc), &in)); got != want {
			t.Errorf("%s: %q, want %q", doc, got, want)
		}
	}
}

// TestExplainText rewrites the type errors that reach us as text only, in
// both decoders' wording, without Go's names or the input's bytes.
func TestExplainText(t *testing.T) {
	for in, want := range map[string]string{
		`calling "tools/list": json: cannot unmarshal "{}}" into Go struct field mcp.ListToolsResult.tools of type []*mcp.Tool`:                                                                        `calling "tools/list": expected an array at "tools", got an object`,
		`json: cannot unmarshal "\"yesterday\",\"client_secret\":\"dcr..." into Go struct field struct { A int64 "json:\"a,omitempty\""; *oauthex.alias }.client_id_issued_at of type int64`:           `expected a number at "client_id_issued_at", got a string`,
		`json: cannot unmarshal number into Go struct field AuthServerMeta.issuer of type string`:                                                                                                      `expected a string at "issuer", got a number`,
		`json: cannot unmarshal array into Go value of type map[string]interface {}`:                                                                                                                   `expected an object, got an array`,
		`handling 'tools/call': invalid params: unmarshaling "{\"name\":5}" into a *mcp.CallToolParamsRaw: json: cannot unmarshal "5}" into Go struct field mcp.CallToolParamsRaw.name of type string`: `handling 'tools/call': invalid params: expected a string at "name", got a number`,
		`json: cannot unmarshal number 300 into Go struct field T.port of type uint8`:                                                                                                                  `expected a number at "port", got a number out of its range`,
		`nothing to rewrite`: `nothing to rewrite`,
	} {
		if got := explainText(in); got != want {
			t.Errorf("explainText(%s)\n = %s\nwant %s", in, got, want)
		}
	}
}

// TestTooDeep finds the first bracket past MaxDepth, not counting those
// in strings.
func TestTooDeep(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		in   string
		want int
	}{
		{`{"a":[1,2,{"b":"[[[["}]}`, -1},
		{deep(MaxDepth), -1},
		{deep(MaxDepth + 1), MaxDepth},
		{`"` + strings.Repeat("[", 2*MaxDepth) + `"`, -1},
		{`"\"` + strings.Repeat("{", 2*MaxDepth) + `"`, -1},
		{`{"x":` + deep(MaxDepth) + `}`, 5 + MaxDepth - 1},
	} {
		if got := TooDeepAt([]byte(c.in)); got != c.want {
			t.Errorf("TooDeepAt(%.40s…) = %d, want %d", c.in, got, c.want)
		}
	}
	if _, err := Decode([]byte(deep(MaxDepth + 1))); err == nil || !strings.Contains(err.Error(), "deeper than 1000 levels") {
		t.Errorf("Decode of a value too deep: %v", err)
	}
	if _, err := Decode([]byte(deep(MaxDepth))); err != nil {
		t.Errorf("Decode at the limit: %v", err)
	}
}

// TestExplainError keeps what precedes a decoding error in the chain and
// drops what follows it (oauthex ends with the answer, which may hold a
// secret).
func TestExplainError(t *testing.T) {
	var v struct {
		ID int64 `json:"client_id_issued_at"`
	}
	body := `{"client_secret":"s3cret (x","client_id_issued_at":"yesterday"}`
	decodeErr := json.Unmarshal([]byte(body), &v)
	err := fmt.Errorf("failed to register client: failed to decode successful registration response: %w (%s)", decodeErr, body)
	want := `failed to register client: failed to decode successful registration response: expected a number at "client_id_issued_at", got a string`
	if got := ExplainError(err); got != want {
		t.Errorf("ExplainError = %s\nwant %s", got, want)
	}
	if _, decodeErr = Decode([]byte(`{"a": }`)); decodeErr == nil {
		t.Fatal("Decode of bad JSON succeeded")
	}
	if got := ExplainError(fmt.Errorf("reading: %w (%s)", decodeErr, "s3cret")); !strings.HasPrefix(got, "reading: not valid JSON") || strings.Contains(got, "s3cret") {
		t.Errorf("ExplainError of a syntax error = %s", got)
	}
}

// TestReaderReportsLongLineAtOnce checks that a line passing the limit is
// reported before its end comes (a server's answer may never end), with
// its id when its first bytes show it, and again when it has ended, with
// the id its last bytes show.
func TestReaderReportsLongLineAtOnce(t *testing.T) {
	for _, c := range []struct {
		name, start, end string
		headID, tailID   string
	}{
		{"id first", `{"jsonrpc":"2.0","id":"wb-7","result":{"content":[{"type":"text","text":"`, `"}]}}`, `"wb-7"`, `"wb-7"`},
		{"id last", `{"result":{"content":[{"type":"text","text":"`, `"}]},"jsonrpc":"2.0","id":12}`, "", "12"},
		// The id after the first 4 KiB is known before the limit.
		{"id after 4 KiB", `{"jsonrpc":"2.0","_meta":{"pad":"` + strings.Repeat("p", 8<<10) + `"},"id":"wb-9","result":{"content":[{"type":"text","text":"`, `"}]}}`, `"wb-9"`, `"wb-9"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pr.Close()
			r := NewReader(pr, 1<<20)
			go func() {
				_, _ = pw.Write([]byte(c.start))
				_, _ = pw.Write(bytes.Repeat([]byte("x"), 2<<20)) // and no end yet
			}()
			type result struct {
				line []byte
				err  error
			}
			next := func() result {
				ch := make(chan result, 1)
				go func() { l, err := r.Next(); ch <- result{l, err} }()
				select {
				case res := <-ch:
					return res
				case <-time.After(time.Minute): // a ceiling, not a measure
					t.Fatal("Next waits for the end of a line that passed the limit")
					return result{}
				}
			}
			res := next()
			var tl *TooLongError
			if !errors.As(res.err, &tl) || tl.Ended || !errors.Is(res.err, ErrTooLong) || tl.Limit != 1<<20 {
				t.Fatalf("first report = %v (%+v), want a TooLongError not ended yet", res.err, tl)
			}
			if got := string(tl.ID()); got != c.headID {
				t.Errorf("id from the head = %q, want %q", got, c.headID)
			}
			go func() {
				_, _ = pw.Write([]byte(c.end + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"))
				pw.Close()
			}()
			res = next()
			if !errors.As(res.err, &tl) || !tl.Ended {
				t.Fatalf("second report = %v, want the TooLongError ended", res.err)
			}
			if got := string(tl.ID()); got != c.tailID {
				t.Errorf("id once ended = %q, want %q", got, c.tailID)
			}
			if res = next(); string(res.line) != `{"jsonrpc":"2.0","id":2,"result":{}}` {
				t.Errorf("the line after = %q, %v", res.line, res.err)
			}
		})
	}
}

// TestParseTooDeep checks that lines nested far too deep for a recursive
// parser are refused, with their id, in one pass and without a stack
// overflow; and that a value of MaxDepth levels in an envelope still
// parses.
func TestParseTooDeep(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		name, line, id string
	}{
		{"ping params, 5,000,000 levels", `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":` + deep(5_000_000) + `}}`, "9"},
		{"use_tool arguments, 1,000,000 levels", `{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"use_tool","arguments":{"arguments":` + deep(1_000_000) + `}}}`, `"a\"b"`},
		{"result, id last", `{"result":` + deep(5_000_000) + `,"jsonrpc":"2.0","id":4}`, "4"},
		{"unterminated", `{"jsonrpc":"2.0","id":1,"params":` + strings.Repeat("{", 3_000_000), "1"},
		{"not an object", deep(3_000_000), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var m Message
			err := Parse([]byte(c.line), &m)
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrTooDeep) || pe.Code != codeParseError {
				t.Fatalf("Parse = %v, want a parse error for nesting too deep", err)
			}
			if string(pe.ID) != c.id {
				t.Errorf("id = %s, want %s", pe.ID, c.id)
			}
			if !strings.Contains(pe.Msg, "deeper than 10000 levels") {
				t.Errorf("message = %q", pe.Msg)
			}
		})
	}
	var m Message
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"use_tool","arguments":{"arguments":` + deep(MaxDepth) + `}}}`
	if err := Parse([]byte(line), &m); err != nil {
		t.Errorf("a value of MaxDepth levels in its envelope: %v", err)
	}
	// Brackets in strings do not count.
	line = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"` + strings.Repeat(`[\"{`, 5000) + `"}}`
	if err := Parse([]byte(line), &m); err != nil {
		t.Errorf("brackets in a string: %v", err)
	}
}

func TestTopLevelID(t *testing.T) {
	for _, c := range []struct{ data, head, tail string }{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "1", "1"},
		{`{"result":{"id":5,"x":["id",{"id":6}]},"id":"wb-3"}`, `"wb-3"`, `"wb-3"`},
		{`{"result":{"a":"\"id\":7"},"jsonrpc":"2.0","id" : -2.5e3 }`, "-2.5e3", "-2.5e3"},
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, "", ""},
		{`{"jsonrpc":"2.0","method":"x","params":{"id":3}}`, "", ""},
		{`{"id":"a\\","x":1}`, `"a\\"`, `"a\\"`},
		{`{"x":"id","y":true}`, "", ""},
		{`{"jsonrpc":"2.0","id":12`, "", ""}, // the number may go on
		{`[{"id":1}]`, "", ""},
	} {
		if got := string(TopLevelID([]byte(c.data))); got != c.head {
			t.Errorf("TopLevelID(%s) = %q, want %q", c.data, got, c.head)
		}
		if got := string(tailID([]byte(c.data))); got != c.tail {
			t.Errorf("tailID(%s) = %q, want %q", c.data, got, c.tail)
		}
		// In pieces, as a long line comes: the same id.
		var scan idScan
		var got json.RawMessage
		for i := range len(c.data) {
			got = scan.feed([]byte{c.data[i]})
		}
		if string(got) != c.head {
			t.Errorf("the id of %s read a byte at a time = %q, want %q", c.data, got, c.head)
		}
	}
}

// TestReaderLimitFor: a long line whose id LimitFor gives a lower limit
// is reported past that limit; other lines keep the Reader's.
func TestReaderLimitFor(t *testing.T) {
	line := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":["` + strings.Repeat("t", 300<<10) + `"]}}` + "\n"
	}
	r := NewReader(strings.NewReader(line("5")+line("6")), 1<<20)
	var asked []string
	r.LimitFor = func(id json.RawMessage) int {
		asked = append(asked, string(id))
		if string(id) == "5" {
			return 200 << 10
		}
		return 0
	}
	_, err := r.Next()
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.Limit != 200<<10 || string(tl.ID()) != "5" {
		t.Fatalf("the line of id 5 = %v (%+v), want it past its limit of 200 KiB", err, tl)
	}
	if !tl.Ended {
		if _, err = r.Next(); !errors.As(err, &tl) || !tl.Ended {
			t.Fatalf("the second report = %v", err)
		}
	}
	if got, err := r.Next(); err != nil || !bytes.HasPrefix(got, []byte(`{"jsonrpc":"2.0","id":6,`)) {
		t.Fatalf("the line of id 6 = %.40q, %v", got, err)
	}
	if strings.Join(asked, ",") != "5,6" {
		t.Errorf("LimitFor asked for %q, want once for each line", asked)
	}
}

// TestReaderMessageInsideALongLine: a message written before the end of a
// line past the limit, which its newline ended, is the next line after
// the long line's report, wherever the pieces of the input fall (a
// message start split between two reads included); a line that nests a
// message, or does not end in a whole one, gives none.
// A response and a notification as the TypeScript SDK writes them: its
// members in another order than the Go and Python SDKs'.
const (
	headIDLast   = `{"result":{"content":[{"type":"text","text":"`
	tailIDLast   = `"}]},"jsonrpc":"2.0","id":"wb-1"}`
	innerIDLast  = `{"result":{"content":[{"type":"text","text":"hi"}]},"jsonrpc":"2.0","id":"wb-2"}`
	notification = `{"method":"notifications/message","params":{"level":"info","data":"hi"},"jsonrpc":"2.0"}`
)

func TestReaderMessageInsideALongLine(t *testing.T) {
	inner := `{"jsonrpc":"2.0","id":"wb-2","result":{"content":[{"type":"text","text":"hi"}]}}`
	head := `{"jsonrpc":"2.0","id":"wb-1","result":{"content":[{"type":"text","text":"`
	pad := strings.Repeat("x", 300<<10)
	for _, c := range []struct {
		name, input string
		want        []string
	}{
		{"cut short", head + pad + inner + "\n" + "xx\"}]}}\n" + "next\n", []string{"(too long)", inner, `xx"}]}}`, "next"}},
		{"whole", head + pad + `"}],"structuredContent":` + inner + "}}\n" + "next\n", []string{"(too long)", "next"}},
		{"cut short, not ended by a message", head + pad + inner + "xx\n" + "next\n", []string{"(too long)", "next"}},
		// The TypeScript SDK writes "jsonrpc" and "id" after a response's
		// "result", and after a notification's "method" and "params".
		{"cut short, id last", headIDLast + pad + innerIDLast + "\n" + "xx" + tailIDLast + "\n" + "next\n", []string{"(too long)", innerIDLast, "xx" + tailIDLast, "next"}},
		{"cut short by a notification", headIDLast + pad + notification + "\n" + "next\n", []string{"(too long)", notification, "next"}},
		{"whole, id last", headIDLast + pad + `"}],"structuredContent":` + innerIDLast + "}" + tailIDLast[len(`"}]}`):] + "\n" + "next\n", []string{"(too long)", "next"}},
	} {
		for _, step := range []int{1 << 10, 7, 3} {
			t.Run(fmt.Sprintf("%s, %d-byte reads", c.name, step), func(t *testing.T) {
				r := NewReader(&trickle{data: c.input, step: step}, 200<<10)
				got := readLines(t, r)
				if strings.Join(got, "|") != strings.Join(c.want, "|") {
					t.Errorf("lines = %.300q, want %.300q", got, c.want)
				}
			})
		}
	}
}

// trickle reads data step bytes at a time, at most.
type trickle struct {
	data string
	step int
}

func (r *trickle) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.step)], r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestSplitInterleaved(t *testing.T) {
	inner := `{"jsonrpc":"2.0","id":2,"result":{}}`
	for _, c := range []struct{ line, head, msg string }{
		{`{"jsonrpc":"2.0","id":1,"result":{"text":"ab` + inner, `{"jsonrpc":"2.0","id":1,"result":{"text":"ab`, inner},
		{`xxxx` + inner, `xxxx`, inner},
		{`xxxx` + `{"jsonrpc":"2.0","id":3,"result":{"nested":` + inner + `}}`, `xxxx`, `{"jsonrpc":"2.0","id":3,"result":{"nested":` + inner + `}}`},
		{inner, "", ""},                 // a whole message: nothing inside it
		{`{"a":` + inner + `}`, "", ""}, // a message nested in a value
		{`xxxx` + inner + `}`, "", ""},  // not ended by a whole one
		{`plain log line`, "", ""},
		{headIDLast + `ab` + innerIDLast, headIDLast + `ab`, innerIDLast},
		{headIDLast + `ab` + notification, headIDLast + `ab`, notification},
		{headIDLast + `ab"}],"structuredContent":` + innerIDLast + "}" + tailIDLast[len(`"}]}`):], "", ""},
	} {
		head, msg := SplitInterleaved([]byte(c.line))
		if string(head) != c.head || string(msg) != c.msg {
			t.Errorf("SplitInterleaved(%s) = %q, %q; want %q, %q", c.line, head, msg, c.head, c.msg)
		}
	}
}

// TestReaderKeepsWhatFollowsALongLine: whatever a read brings after the
// newline that ends a line being skipped is kept: the next message after a
// line past the limit, or one written inside it past the limit (which ends
// it), is read, whatever the sizes of the reads (chosen at random, with a
// fixed seed) and wherever the limit falls.
func TestReaderKeepsWhatFollowsALongLine(t *testing.T) {
	rnd := rand.New(rand.NewSource(42))
	head := `{"jsonrpc":"2.0","id":"wb-1","result":{"content":[{"type":"text","text":"`
	tail := `"}]}}`
	answer := `{"jsonrpc":"2.0","id":"wb-2","result":{"content":[{"type":"text","text":"after"}]}}`
	for i := range 300 {
		limit := bufSize + rnd.Intn(300<<10)
		pad := limit + 1 + rnd.Intn(200<<10) - len(head) - len(tail)
		var input, where string
		if rnd.Intn(2) == 0 {
			where = "after the line"
			input = head + strings.Repeat("x", pad) + tail + "\n" + answer + "\n"
		} else {
			where = "inside the line, past the limit"
			at := limit - len(head) + 1 + rnd.Intn(pad-(limit-len(head)))
			input = head + strings.Repeat("x", at) + answer + "\n" + strings.Repeat("x", pad-at) + tail + "\n"
		}
		step := 1 + rnd.Intn(200<<10)
		got := readLines(t, NewReader(&randomReads{data: input, rnd: rnd, max: step}, limit))
		if len(got) < 2 || got[0] != "(too long)" || got[1] != answer {
			t.Fatalf("case %d, the answer %s (limit %d, reads of up to %d bytes): lines %.200q; want the answer after the long line's report", i, where, limit, step, got)
		}
	}
}

// randomReads reads data in pieces of 1 to max bytes, at random.
type randomReads struct {
	data string
	rnd  *rand.Rand
	max  int
}

func (r *randomReads) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+r.rnd.Intn(r.max))], r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestLongLineCutShortIsNotTheOthers: a line past the limit that a message
// written inside it ends does not take that message's id as its own (the
// TypeScript SDK writes the id last, so the line's last bytes show the
// other message's): the other call would fail in its place, and its answer
// be lost. A long line that ends as itself still shows its id there.
func TestLongLineCutShortIsNotTheOthers(t *testing.T) {
	pad := strings.Repeat("x", 300<<10)
	for _, c := range []struct {
		name, input, id, next string
	}{
		{"cut short", headIDLast + pad + innerIDLast + "\n", "", innerIDLast},
		{"whole", headIDLast + pad + tailIDLast + "\n", `"wb-1"`, ""},
	} {
		for _, step := range []int{64 << 10, 1000, 7} {
			t.Run(fmt.Sprintf("%s, %d-byte reads", c.name, step), func(t *testing.T) {
				r := NewReader(&trickle{data: c.input, step: step}, 200<<10)
				var ended *TooLongError
				for ended == nil {
					_, err := r.Next()
					var tl *TooLongError
					if !errors.As(err, &tl) {
						t.Fatalf("Next: %v, want the long line's reports", err)
					}
					if tl.Ended {
						ended = tl
					}
				}
				if got := string(ended.ID()); got != c.id {
					t.Errorf("the long line's id: %q, want %q", got, c.id)
				}
				line, err := r.Next()
				if c.next == "" {
					if err != io.EOF {
						t.Errorf("after the line: %.100q, %v; want the end", line, err)
					}
				} else if string(line) != c.next || err != nil {
					t.Errorf("after the line: %.100q, %v; want %q", line, err, c.next)
				}
			})
		}
	}
}
