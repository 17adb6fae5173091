package hostconfig

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
)

// RemoveJSONMembers returns data without the members names of the object
// at container, and the names it removed, in file order. Everything else
// stays byte for byte. A name that is not there is left alone.
func RemoveJSONMembers(data []byte, container []string, names []string) ([]byte, []string, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return data, nil, nil
	}
	bom := bytes.HasPrefix(data, []byte("\xef\xbb\xbf"))
	prefix := []byte{}
	if bom {
		// A copy: appending to a slice of data would write over the
		// caller's bytes (the file as it was, which the backup keeps).
		prefix, data = []byte("\xef\xbb\xbf"), data[3:]
	}
	before, err := decodeJSON(blankJSONC(data))
	if err != nil {
		return nil, nil, err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var removed []string
	out := data
	for {
		blank := blankJSONC(out)
		s := scanner{b: blank}
		obj := s.object(s.skipSpace(0))
		ok := true
		for _, k := range container {
			m, found := obj.get(k)
			if !found || blank[m.valStart] != '{' {
				ok = false
				break
			}
			obj = s.object(m.valStart)
		}
		if !ok {
			break
		}
		i := -1
		for j, m := range obj.members {
			if want[m.key] {
				i = j
				break
			}
		}
		if i < 0 {
			break
		}
		m := obj.members[i]
		out = removeMember(out, blank, obj, i)
		delete(want, m.key)
		removed = append(removed, m.key)
	}
	if len(removed) == 0 {
		return append(prefix, data...), nil, nil
	}
	after, err := decodeJSON(blankJSONC(out))
	if err != nil {
		return nil, nil, errors.New("removing the moved servers would break the file: nothing written")
	}
	expect := deepCopy(before)
	for _, n := range removed {
		deleteAt(expect, container, n)
	}
	if !reflect.DeepEqual(after, expect) {
		return nil, nil, errors.New("removing the moved servers would change more than their entries: nothing written")
	}
	return append(prefix, out...), removed, nil
}

// removeMember returns b (blank, the same blanked of comments) without
// the i-th member of obj and one comma next to it: the comma before it,
// or for the first member the one after it. The member's own lines go
// when nothing else is on them; comments around it stay, the one above
// the next member too.
func removeMember(b, blank []byte, obj jsonObject, i int) []byte {
	m := obj.members[i]
	s := scanner{b: blank}
	from, to := m.keyStart, m.valEnd
	// The member's line, when it holds nothing else.
	ls := from
	for ls > 0 && (b[ls-1] == ' ' || b[ls-1] == '\t') {
		ls--
	}
	lineStart := ls == 0 || b[ls-1] == '\n'
	comma := -1 // the comma that goes with it
	if i > 0 {
		if j := s.skipSpace(obj.members[i-1].valEnd); j < len(b) && blank[j] == ',' {
			comma = j
		}
	} else if j := s.skipSpace(m.valEnd); j < len(b) && blank[j] == ',' {
		comma = j
		if len(bytes.TrimSpace(b[m.valEnd:j])) == 0 {
			to, comma = j+1, -1 // "value," : the comma is the member's
		}
	}
	le := to
	for le < len(b) && (b[le] == ' ' || b[le] == '\t') {
		le++
	}
	if lineStart && (le == len(b) || b[le] == '\n' || b[le] == '\r') {
		from = ls
		if le < len(b) && b[le] == '\r' {
			le++
		}
		if le < len(b) && b[le] == '\n' {
			le++
		}
		to = le
	}
	var out []byte
	if comma >= 0 && comma < from {
		out = append(out, b[:comma]...)
		out = append(out, b[comma+1:from]...)
	} else {
		out = append(out, b[:from]...)
	}
	if comma >= to {
		out = append(out, b[to:comma]...)
		return append(out, b[comma+1:]...)
	}
	return append(out, b[to:]...)
}

// CommentOutTOMLTables returns data with the tables prefix.NAME (and their
// sub-tables) for each of names turned into comments ("# " before each
// line), so that the user can bring one back, and the names it commented
// out. Everything else stays byte for byte.
func CommentOutTOMLTables(data []byte, prefix []string, names []string) ([]byte, []string, error) {
	before, _, err := decodeTOML(data)
	if err != nil {
		return nil, nil, err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	lines := tomlLines(data)
	var out []byte
	var removed []string
	seen := map[string]bool{}
	in := false
	for _, l := range lines {
		text := data[l.start:l.end]
		if l.header != nil {
			in = len(l.header) > len(prefix) && hasPrefix(l.header, prefix) && want[l.header[len(prefix)]]
			if in && !seen[l.header[len(prefix)]] {
				seen[l.header[len(prefix)]] = true
				removed = append(removed, l.header[len(prefix)])
			}
		}
		if l.start == 0 && bytes.HasPrefix(text, []byte("\ufeff")) {
			out, text = append(out, text[:3]...), text[3:] // a byte order mark stays first
		}
		if in && len(bytes.TrimSpace(text)) > 0 && !strings.HasPrefix(strings.TrimSpace(string(text)), "#") {
			out = append(out, "# "...)
		}
		out = append(out, text...)
	}
	if len(removed) == 0 {
		return data, nil, nil
	}
	after, _, err := decodeTOML(out)
	if err != nil {
		return nil, nil, errors.New("commenting out the moved servers would break the file: nothing written")
	}
	expect := deepCopy(before)
	for _, n := range removed {
		deleteAt(expect, prefix, n)
	}
	// A table left empty is no table in TOML.
	if m, ok := lookupTOML(expect.(map[string]any), prefix); ok {
		if mm, _ := m.(map[string]any); len(mm) == 0 {
			deleteAt(expect, prefix[:len(prefix)-1], prefix[len(prefix)-1])
		}
	}
	if !reflect.DeepEqual(any(after), expect) {
		return nil, nil, errors.New("commenting out the moved servers would change more than their tables (one is also written another way): nothing written")
	}
	return out, removed, nil
}

// deleteAt deletes the member name of the object at container in v, a
// decoded document.
func deleteAt(v any, container []string, name string) {
	m, _ := v.(map[string]any)
	for _, k := range container {
		m, _ = m[k].(map[string]any)
	}
	delete(m, name)
}
