package bridge

import (
	"net/http"
	"strings"
)

// Router sends each of the emulator's trigger deliveries, which arrive at
// /functions/projects/{project}/triggers/{key}, to the handler for its key.
type Router map[string]http.Handler

func (rt Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	h, ok := rt[key]
	if !ok {
		http.Error(w, "no trigger "+key, http.StatusNotFound)
		return
	}
	h.ServeHTTP(w, r)
}
