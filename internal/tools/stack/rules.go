package stack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/tallycounters/tally/deploy"
)

// rulesSource is the rules the emulator enforces: tally's for the
// layout, with the app's own (Options.AppRules) merged in, as 'tally
// rules --merge' prints them; what the app's rules must add is logged.
func (s *Stack) rulesSource() (string, error) {
	src, err := s.tallyRules()
	if err != nil || s.o.AppRules == "" {
		return src, err
	}
	app, err := os.ReadFile(s.o.AppRules)
	if err != nil {
		return "", fmt.Errorf("stack: the app's rules: %w", err)
	}
	m, err := deploy.MergeRules(string(app), src)
	if err != nil {
		return "", fmt.Errorf("stack: the app's rules %s: %w", s.o.AppRules, err)
	}
	for _, n := range m.Notes {
		s.o.Logger.Warn("stack: "+n, "rules", s.o.AppRules)
	}
	return m.Rules, nil
}

// tallyRules are tally's rules for the stack's layout, with the
// extension's clients' for the counters declared (TALLY_EXTENSION_COUNTERS),
// if any, and, with no rules of the app's, reads of the documents they
// are on, which those clients listen to.
func (s *Stack) tallyRules() (string, error) {
	l := s.o.layout()
	src, err := deploy.Rules(deploy.RulesOptions{Collection: l.Collection})
	if l.OnDocs() {
		src, err = deploy.CountsRules(l, false)
	}
	if err != nil || len(s.o.extension()) == 0 {
		return src, err
	}
	ext, err := deploy.ExtensionRules(s.o.extension(), false)
	if err != nil {
		return "", err
	}
	if s.o.AppRules == "" {
		ext += deploy.ExtensionReads(s.o.extension(), false)
	}
	return deploy.WithExtension(src, ext)
}

// rulesPoll is how often the app's rules file is looked at for a change.
const rulesPoll = 500 * time.Millisecond

// reloadRules loads the app's rules, merged with tally's, into the
// emulator each time the file changes, until s.reading is closed. Rules
// that do not merge, or that the emulator refuses, are logged, and the
// ones in force stay.
func (s *Stack) reloadRules() {
	defer close(s.read)
	last := modified(s.o.AppRules)
	t := time.NewTicker(rulesPoll)
	defer t.Stop()
	for {
		select {
		case <-s.reading:
			return
		case <-t.C:
		}
		now := modified(s.o.AppRules)
		if now.Equal(last) {
			continue
		}
		last = now
		src, err := s.rulesSource()
		if err == nil {
			err = s.loadRules(src)
		}
		if err != nil {
			s.o.Logger.Error("stack: the rules in force stay: "+err.Error(), "rules", s.o.AppRules)
			continue
		}
		os.WriteFile(s.Rules, []byte(src), 0o644)
		s.o.Logger.Info("stack: rules reloaded", "rules", s.o.AppRules)
	}
}

// modified is when file last changed, zero if it cannot be read.
func modified(file string) time.Time {
	st, err := os.Stat(file)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// loadRules makes the emulator enforce src, through its REST API.
func (s *Stack) loadRules(src string) error {
	body, _ := json.Marshal(map[string]any{"rules": map[string]any{"files": []map[string]string{{"name": "firestore.rules", "content": src}}}})
	req, err := http.NewRequest(http.MethodPut, "http://"+s.EmulatorHost+"/emulator/v1/projects/"+s.o.Config.Project+":securityRules", bytes.NewReader(body))
	if err != nil {
		return err
	}
	c := &http.Client{Timeout: s.o.Timeout}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("stack: load the rules: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var msg bytes.Buffer
		msg.ReadFrom(resp.Body)
		return fmt.Errorf("stack: the emulator refused the rules: %s %s", resp.Status, bytes.TrimSpace(msg.Bytes()))
	}
	return nil
}
