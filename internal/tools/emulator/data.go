package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// exportPrefix names the exports Export writes, one folder each.
const exportPrefix = "tally-"

// Export writes the emulator's data for project into a new export under dir
// and then removes older exports there, so dir always holds one complete
// export. (The emulator's own --export-on-exit does not fire on SIGTERM.)
func (e *Emulator) Export(ctx context.Context, project, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("emulator: export to %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("emulator: export: %w", err)
	}
	name := exportPrefix + strconv.FormatInt(time.Now().UnixNano(), 10)
	body, _ := json.Marshal(map[string]string{
		"database":         "projects/" + project + "/databases/(default)",
		"export_directory": abs,
		"export_name":      name,
	})
	url := "http://" + e.host + "/emulator/v1/projects/" + project + ":export"
	if err := postJSON(ctx, url, body); err != nil {
		os.RemoveAll(filepath.Join(abs, name)) // what it wrote of it, if anything: the last whole export stays the latest
		return fmt.Errorf("emulator: export: %w", err)
	}
	for _, old := range exports(abs) {
		if filepath.Base(old) != name {
			os.RemoveAll(old)
		}
	}
	return nil
}

// LatestExport is the metadata file of the newest export Export wrote under
// dir, for Options.ImportData; "" if there is none.
func LatestExport(dir string) string {
	all := exports(dir)
	for i := len(all) - 1; i >= 0; i-- {
		meta := filepath.Join(all[i], filepath.Base(all[i])+".overall_export_metadata")
		if isFile(meta) {
			return meta
		}
	}
	return ""
}

// exports lists dir's export folders, oldest first.
func exports(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), exportPrefix) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Slice(out, func(i, j int) bool { return stamp(out[i]) < stamp(out[j]) })
	return out
}

func stamp(path string) int64 {
	n, _ := strconv.ParseInt(strings.TrimPrefix(filepath.Base(path), exportPrefix), 10, 64)
	return n
}
