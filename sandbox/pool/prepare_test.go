package pool

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestPrepareCopiesFromTheEngineThatHasTheImage(t *testing.T) {
	a := &fake{name: "a"}
	b := &fake{name: "b", images: map[string]string{"img": "sha256:1111"}}
	c := &fake{name: "c", images: map[string]string{"img": "sha256:0000"}} // stale
	p, log := newPool(t, a, b, c)
	var ensuredOn []string
	id, err := p.PrepareImage(context.Background(), "img", func(_ context.Context, e Engine) (string, error) {
		f := e.(*fake)
		ensuredOn = append(ensuredOn, f.name)
		return f.images["img"], nil
	}, log)
	if err != nil || id != "sha256:1111" {
		t.Fatalf("Prepare: %s, %v", id, err)
	}
	if strings.Join(ensuredOn, ",") != "b" {
		t.Errorf("ensured on %v, want only b, which had the image (nothing rebuilt)", ensuredOn)
	}
	for _, f := range []*fake{a, c} {
		if got, _ := f.ImageID(context.Background(), "img"); got != id {
			t.Errorf("engine %s has %q after Prepare, want %s", f.name, got, id)
		}
	}
	if n := strings.Count(log.String(), "copied from b to"); n != 2 {
		t.Errorf("want 2 copy lines, got:\n%s", log)
	}
}

func TestPrepareTakesOutAnEngineThatCannotGetIt(t *testing.T) {
	a := &fake{name: "a", images: map[string]string{"img": "sha256:1111"}}
	b := &fake{name: "b"}
	b.dead.Store(true)
	p, log := newPool(t, a, b)
	id, err := p.PrepareImage(context.Background(), "img", func(_ context.Context, e Engine) (string, error) {
		return e.(*fake).images["img"], nil
	}, nil)
	if err != nil || id != "sha256:1111" {
		t.Fatalf("Prepare: %s, %v", id, err)
	}
	if in := p.In(); len(in) != 1 || in[0].Name != "a" {
		t.Errorf("in the pool: %v, want a only", in)
	}
	if !strings.Contains(log.String(), "engine b is taken out of the pool (1 of 2 left): it cannot get image img") {
		t.Errorf("no clear line for b:\n%s", log)
	}
}

func TestPrepareReturnsTheEnsureError(t *testing.T) {
	a := &fake{name: "a"}
	p, _ := newPool(t, a)
	boom := errors.New("no mirror")
	if _, err := p.PrepareImage(context.Background(), "img", func(context.Context, Engine) (string, error) { return "", boom },
		nil); !errors.Is(
		err,
		boom,
	) {
		t.Errorf("error %v, want ensure's", err)
	}
}
