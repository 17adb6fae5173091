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
		prefix, data = data[:3], data[3:]
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
		from, to := m.keyStart, m.valEnd
		switch {
		case i > 0:
			from = obj.members[i-1].valEnd // the comma before it goes with it
		case len(obj.members) > 1:
			to = obj.members[1].keyStart // and the comma after it
		default:
			from, to = obj.open+1, obj.close
		}
		out = append(append([]byte{}, out[:from]...), out[to:]...)
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
