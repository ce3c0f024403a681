package npmci

import (
	"os"
	"path/filepath"
	"strings"
)

// compiling names the package under dir that node-gyp is building from
// source, if any: what makes an install take minutes where a prebuilt
// binary could not be fetched.
func compiling(dir string) string {
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), "node-gyp") {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", p.Name(), "cwd"))
		if err == nil && strings.HasPrefix(cwd, dir+string(filepath.Separator)) {
			return filepath.Base(cwd)
		}
	}
	return ""
}
