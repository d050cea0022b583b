package sandbox

import (
	"os"
	"regexp"
	"strings"
)

// reEngineFile matches the files a Docker engine bind-mounts into each container from the
// container's own directory (…/containers/<ID>/hostname, hosts, resolv.conf), as mountinfo's
// root field names them.
var reEngineFile = regexp.MustCompile(`/containers/([0-9a-f]{64})/(?:hostname|hosts|resolv\.conf)$`)

var reShortID = regexp.MustCompile(`^[0-9a-f]{12,64}$`)

// OwnContainerIDs returns what this process's container ID may be, best guess first, when it
// runs in a container of a Docker engine: the container directory the engine mounted
// /etc/hostname, /etc/hosts or /etc/resolv.conf from, then the hostname, which the engine
// sets to the short ID unless told otherwise. Outside a container it returns none, or a guess
// no engine knows: the caller asks its engine, which must have a running container of that ID.
func OwnContainerIDs() []string {
	mountinfo, _ := os.ReadFile("/proc/self/mountinfo")
	host, _ := os.Hostname()
	return ownContainerIDs(string(mountinfo), host)
}

func ownContainerIDs(mountinfo, hostname string) []string {
	var ids []string
	add := func(id string) {
		for _, have := range ids {
			if strings.HasPrefix(have, id) {
				return
			}
		}
		ids = append(ids, id)
	}
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		// 36 35 98:0 /var/lib/docker/containers/<ID>/hostname /etc/hostname rw,... (proc(5))
		if len(f) < 5 || !strings.HasPrefix(f[4], "/etc/") {
			continue
		}
		if m := reEngineFile.FindStringSubmatch(f[3]); m != nil {
			add(m[1])
		}
	}
	if reShortID.MatchString(hostname) {
		add(hostname)
	}
	return ids
}
