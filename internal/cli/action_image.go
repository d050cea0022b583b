package cli

import (
	"github.com/sethvargo/go-githubactions"
)

// The Action's `image` command prepares the images a suite's grade needs, and grade makes the
// missing ones itself; both take the mirror, keyring and image-cache inputs. In the Action's
// container the rootfs is built in a helper container of the Action's own image (see
// sandbox/docker.BuildImage). image-key names the suite's recipe images for actions/cache.

// imageArgs: the suite's images (its verifier image and environments), else the default
// built-in image.
func (in actionInputs) imageArgs() []string {
	args := []string{"image", "build"}
	if in.Suite != "" {
		args = append(args, "--suite", in.Suite)
		for _, r := range in.Repos {
			args = append(args, "--repo", r)
		}
	}
	return append(args, in.imageFlagArgs()...)
}

func (in actionInputs) imageFlagArgs() []string {
	var args []string
	for _, f := range []struct{ flag, v string }{
		{"--mirror", in.Mirror}, {"--keyring", in.Keyring}, {"--image-cache", in.ImageCache},
	} {
		if f.v != "" {
			args = append(args, f.flag, f.v)
		}
	}
	return args
}

// setImageKey sets the image-key output of grade and image: the key a cache of the suite's
// recipe images is saved under (suiteImageKey). A suite that does not load has none; the
// command has said why.
func setImageKey(a *githubactions.Action, inv *invocation, in actionInputs) error {
	if (in.Command != "grade" && in.Command != "image") || in.Suite == "" || inv.Getenv("GITHUB_OUTPUT") == "" {
		return nil // without GITHUB_OUTPUT, the results' outputs say so once
	}
	repos, err := parseRepoFlags(in.Repos)
	if err != nil {
		return nil
	}
	s, err := loadSuite(in.Suite, repos)
	if err != nil {
		return nil
	}
	return setOutputs(a, inv, map[string]string{"image-key": suiteImageKey(s)})
}
