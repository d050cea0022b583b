package sandbox

import (
	"slices"
	"testing"
)

func TestOwnContainerIDs(t *testing.T) {
	const id = "3f1c0a9be2d54c6f8e7a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6"
	const other = "0000000000000000000000000000000000000000000000000000000000000001"
	mountinfo := "1 0 0:31 / / rw,relatime - fuse.fuse-overlayfs fuse-overlayfs rw\n" +
		"36 35 98:0 /var/lib/docker/containers/" + id + "/resolv.conf /etc/resolv.conf rw - ext4 /dev/sda rw\n" +
		"37 35 98:0 /var/lib/docker/containers/" + id + "/hostname /etc/hostname rw - ext4 /dev/sda rw\n" +
		"38 35 98:0 /data/containers/" + other + "/hostname /srv/hostname rw - ext4 /dev/sda rw\n" +
		"39 35 98:0 /x/containers/" + other + "/hostname.bak /etc/hostname.bak rw - ext4 /dev/sda rw\n"
	for _, tc := range []struct {
		name, mountinfo, hostname string
		want                      []string
	}{
		{"docker container", mountinfo, id[:12], []string{id}},
		{"another hostname", mountinfo, "runner-7", []string{id}},
		{"data root elsewhere", "5 4 0:1 /containers/" + id + "/hosts /etc/hosts rw - xfs x rw\n", "h", []string{id}},
		{"hostname only", "", "abcdef012345", []string{"abcdef012345"}},
		{"not a container", "1 0 0:31 / / rw - ext4 /dev/sda rw\n", "vm", nil},
		{"hostname not hex", "", "abcdefg12345", nil},
		{"hostname too short", "", "abcdef", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ownContainerIDs(tc.mountinfo, tc.hostname); !slices.Equal(got, tc.want) {
				t.Errorf("ownContainerIDs = %q, want %q", got, tc.want)
			}
		})
	}
}
