package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// Sweep removes the containers of dead runs, and only those. A container's run is alive while
// the grader process named by its labels (host, boot id, pid and pid start time) is running.
// Containers made on another host, or in another pid namespace (whose pid cannot be checked
// here), are left alone unless SweepForeignAfter is set and they are
// older than that.
// A build helper whose LabelParent container is no longer running is removed too.
// Every container the sweep removes is logged.
func (d *Backend) Sweep(ctx context.Context) ([]string, error) {
	list, err := d.labelled(ctx, LabelRun)
	if err != nil {
		return nil, fmt.Errorf("%w: list tender containers: %w", ErrEngine, err)
	}
	var removed []string
	var errs []error
	for _, c := range list {
		if !d.leftover(ctx, c) {
			continue
		}
		if err := d.forceRemove(ctx, c.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		name := displayName(c)
		d.logf("swept %s of dead run %s", name, c.Labels[LabelRun])
		removed = append(removed, name)
	}
	vols, err := d.sweepVolumes(ctx)
	nets, nerr := d.sweepNetworks(ctx, func(l map[string]string) bool {
		return d.self.judge(ownerFromLabels(l)) == dead
	})
	removed = append(append(removed, vols...), nets...)
	return removed, errors.Join(append(errs, err, nerr)...)
}

// sweepVolumes removes labelled volumes of dead runs. Checks use tmpfs mounts and make no
// volumes; this clears any that a future layout or an interrupted build leaves behind.
func (d *Backend) sweepVolumes(ctx context.Context) ([]string, error) {
	list, err := d.cli.VolumeList(ctx, client.VolumeListOptions{Filters: make(client.Filters).Add("label", LabelRun)})
	if err != nil {
		return nil, fmt.Errorf("%w: list tender volumes: %w", ErrEngine, err)
	}
	var removed []string
	var errs []error
	for _, v := range list.Items {
		if d.self.judge(ownerFromLabels(v.Labels)) != dead {
			continue
		}
		_, err := d.cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{Force: true})
		if err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("%w: remove volume %s: %w", ErrEngine, v.Name, err))
			continue
		}
		d.logf("swept volume %s of dead run %s", v.Name, v.Labels[LabelRun])
		removed = append(removed, "volume/"+v.Name)
	}
	return removed, errors.Join(errs...)
}

func (d *Backend) leftover(ctx context.Context, c container.Summary) bool {
	if parent := c.Labels[LabelParent]; parent != "" && !d.running(ctx, parent) {
		return true
	}
	switch d.self.judge(ownerFromLabels(c.Labels)) {
	case dead:
		return true
	case foreign, otherNS:
		return d.SweepForeignAfter > 0 && time.Since(time.Unix(c.Created, 0)) > d.SweepForeignAfter
	default:
		return false
	}
}

// running reports whether the container id is running; an engine that cannot say keeps it.
func (d *Backend) running(ctx context.Context, id string) bool {
	in, err := d.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if cerrdefs.IsNotFound(err) {
		return false
	}
	return err != nil || (in.Container.State != nil && in.Container.State.Running)
}

// removeLabelled force-removes every container that carries label ("key=value"), whoever
// made it.
func (d *Backend) removeLabelled(ctx context.Context, label string) error {
	list, err := d.labelled(ctx, label)
	if err != nil {
		return fmt.Errorf("%w: list containers labelled %s: %w", ErrEngine, label, err)
	}
	var errs []error
	for _, c := range list {
		if err := d.forceRemove(ctx, c.ID); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Containers lists the names of the containers of runID (all runs when runID is empty).
func (d *Backend) Containers(ctx context.Context, runID string) ([]string, error) {
	f := LabelRun
	if runID != "" {
		f += "=" + runID
	}
	list, err := d.labelled(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("%w: list containers: %w", ErrEngine, err)
	}
	names := make([]string, 0, len(list))
	for _, c := range list {
		names = append(names, displayName(c))
	}
	return names, nil
}

// labelled lists every container, running or not, that carries label ("key" or "key=value").
func (d *Backend) labelled(ctx context.Context, label string) ([]container.Summary, error) {
	list, err := d.cli.ContainerList(ctx,
		client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
	return list.Items, err
}

func (d *Backend) forceRemove(ctx context.Context, id string) error {
	_, err := d.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("%w: remove container %s: %w", ErrEngine, id, err)
	}
	return nil
}

func displayName(c container.Summary) string {
	if len(c.Names) > 0 {
		return strings.TrimPrefix(c.Names[0], "/")
	}
	return c.ID
}
