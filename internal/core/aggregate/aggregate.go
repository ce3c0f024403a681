package aggregate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Aggregate is a field of a counted document that tally keeps as an
// aggregation over documents of the app's: count, sum, average, greatest
// or least over a child collection of the document (posts/p/comments),
// or over a collection named from the root (users).
type Aggregate struct {
	Field string   // the counted document's field
	Op    string   // OpCount, OpSum, OpAvg, OpMax or OpMin
	Child string   // the collection: an id under the document, or a path from the root when Root
	Root  bool     // Child is a collection path from the database root
	Of    string   // the children's field summed, averaged or compared; "" for a count
	Where []Filter // filters, all of which a child must pass to be taken
}

// FieldName matches a plain field name: an identifier, which needs no
// quoting in a field path, a query or security rules.
var FieldName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// Aggregations an Aggregate may be.
const (
	OpCount = "count"
	OpSum   = "sum"
	OpAvg   = "avg"
	OpMax   = "max" // the greatest finite number among the children's values
	OpMin   = "min" // the least
)

// Filter is one equality filter of an aggregate: the child's Field equals Value,
// a string, an int64 or a bool.
type Filter struct {
	Field string
	Value any
}

// String writes a as ParseCounts reads it.
func (a Aggregate) String() string {
	arg := a.Child
	if a.Root {
		arg = "/" + arg
	}
	if a.Op != OpCount {
		arg += "." + a.Of
	}
	if len(a.Where) > 0 {
		arg += " where " + a.conditions()
	}
	return fmt.Sprintf("%s=%s(%s)", a.Field, a.Op, arg)
}

// conditions writes a's filters as Parse reads them.
func (a Aggregate) conditions() string {
	conds := make([]string, len(a.Where))
	for i, f := range a.Where {
		v := fmt.Sprint(f.Value)
		if s, ok := f.Value.(string); ok {
			v = strconv.Quote(s)
		}
		conds[i] = f.Field + " == " + v
	}
	return strings.Join(conds, " and ")
}

// aggregateSpec is name=op(argument).
var aggregateSpec = regexp.MustCompile(`^\s*([^=\s]+)\s*=\s*(count|sum|avg|max|min)\s*\((.*)\)\s*$`)

// Parse reads one aggregate of TALLY_COUNTS:
// name=count(CHILD), name=sum(CHILD.FIELD), name=avg(CHILD.FIELD),
// name=max(CHILD.FIELD) or name=min(CHILD.FIELD), each with the children
// it takes filtered or not: name=max(CHILD.FIELD where FIELD == VALUE
// [and ...]). CHILD is a collection id under the counted document, or
// /a/path/from/the/root.
func Parse(s string) (Aggregate, error) {
	m := aggregateSpec.FindStringSubmatch(s)
	if m == nil {
		return Aggregate{}, fmt.Errorf("aggregate %q: want name=count(child), name=count(child where field == value), name=sum(child.field), name=avg(child.field), name=max(child.field) or name=min(child.field)", s)
	}
	a := Aggregate{Field: m[1], Op: m[2]}
	arg, cond, _ := strings.Cut(strings.TrimSpace(m[3]), " where ")
	var err error
	if a.Where, err = parseFilters(cond); err != nil {
		return Aggregate{}, fmt.Errorf("aggregate %q: %w", s, err)
	}
	if a.Op == OpCount {
		a.Child = strings.TrimSpace(arg)
	} else {
		dot := strings.LastIndex(arg, ".")
		if dot < 0 {
			return Aggregate{}, fmt.Errorf("aggregate %q: %s takes child.field", s, a.Op)
		}
		a.Child, a.Of = strings.TrimSpace(arg[:dot]), strings.TrimSpace(arg[dot+1:])
		if !FieldName.MatchString(a.Of) {
			return Aggregate{}, fmt.Errorf("aggregate %q: the field %q is not a plain name", s, a.Of)
		}
	}
	if strings.HasPrefix(a.Child, "/") {
		a.Root, a.Child = true, strings.Trim(a.Child, "/")
	}
	return a, nil
}

// parseFilters reads the conditions after where: FIELD == VALUE, joined
// by and; none if cond is empty.
func parseFilters(cond string) ([]Filter, error) {
	if cond == "" {
		return nil, nil
	}
	var out []Filter
	for _, c := range SplitOutsideQuotes(cond, " and ") {
		f, err := parseFilter(c)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// parseFilter reads FIELD == VALUE: a quoted string, an integer, true or
// false.
func parseFilter(s string) (Filter, error) {
	field, value, ok := strings.Cut(s, "==")
	field, value = strings.TrimSpace(field), strings.TrimSpace(value)
	if !ok || !FieldName.MatchString(field) {
		return Filter{}, fmt.Errorf("the filter %q: want field == value", strings.TrimSpace(s))
	}
	f := Filter{Field: field}
	switch {
	case value == "true" || value == "false":
		f.Value = value == "true"
	case strings.HasPrefix(value, `"`) || strings.HasPrefix(value, `'`):
		if len(value) < 2 || value[len(value)-1] != value[0] {
			return Filter{}, fmt.Errorf("the filter %q: the string is not closed", s)
		}
		f.Value = value[1 : len(value)-1]
	default:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return Filter{}, fmt.Errorf("the filter %q: the value is not a quoted string, an integer, true or false", strings.TrimSpace(s))
		}
		f.Value = n
	}
	return f, nil
}

// SplitOutsideQuotes splits s at each sep that is outside quotes and
// parentheses.
func SplitOutsideQuotes(s, sep string) []string {
	var out []string
	var quote byte
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && strings.HasPrefix(s[i:], sep):
			out = append(out, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(out, s[start:])
}
