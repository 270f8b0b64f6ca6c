package main

import (
	"context"
	"flag"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// storeFlags are the flags every command that opens a lake takes.
type storeFlags struct {
	lakeName string
	path     string
	walStore string
	endpoint string
	region   string
	keyID    string
	secret   string
	token    string
	urlStyle string
}

func (s *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.lakeName, "lake", "", "a named lake of the store (DuckLake's METADATA_SCHEMA; 'moraine inspect' lists them); default: the store's own lake (schema main)")
	fs.StringVar(&s.path, "path", "", "the catalog's prefix inside the store")
	fs.StringVar(&s.walStore, "wal-store", "", "the store the lake's WAL is in, after move-wal moved it out of the lake's own store (default: the lake's own store)")
	fs.StringVar(&s.endpoint, "s3-endpoint", "", "S3 endpoint URL (default: AWS, or AWS_ENDPOINT_URL_S3)")
	fs.StringVar(&s.region, "s3-region", "", "S3 region (default: AWS_REGION or us-east-1)")
	fs.StringVar(&s.keyID, "s3-access-key-id", "", "S3 access key id (default: AWS_ACCESS_KEY_ID)")
	fs.StringVar(&s.secret, "s3-secret-access-key", "", "S3 secret access key (default: AWS_SECRET_ACCESS_KEY)")
	fs.StringVar(&s.token, "s3-session-token", "", "S3 session token (default: AWS_SESSION_TOKEN)")
	fs.StringVar(&s.urlStyle, "s3-url-style", "", "S3 URL style: path or vhost (default: path with an endpoint)")
}

func (s *storeFlags) open(ctx context.Context, uri string) (objstore.Store, error) {
	return objstore.Open(ctx, uri, objstore.Options{S3: objstore.S3Options{
		Endpoint: s.endpoint, Region: s.region, AccessKeyID: s.keyID, SecretAccessKey: s.secret,
		SessionToken: s.token, URLStyle: s.urlStyle,
	}})
}

// lake opens the store at uri and the catalog options the flags give
// (catalogOptions): what every command needs to open the lake at uri.
func (s *storeFlags) lake(ctx context.Context, uri string) (objstore.Store, core.CatalogOptions, error) {
	store, err := s.open(ctx, uri)
	if err != nil {
		return nil, core.CatalogOptions{}, err
	}
	opts, err := s.catalogOptions(ctx)
	if err != nil {
		return nil, core.CatalogOptions{}, err
	}
	if s.lakeName == "" {
		return store, opts, nil
	}
	if store, err = core.LakeStore(store, s.lakeName); err != nil {
		return nil, core.CatalogOptions{}, err
	}
	if opts.WalStore != nil {
		if opts.WalStore, err = core.LakeStore(opts.WalStore, s.lakeName); err != nil {
			return nil, core.CatalogOptions{}, err
		}
	}
	opts.NamedLake = s.lakeName
	return store, opts, nil
}

// catalogOptions are the options every open of the lake needs: its path
// and, with -wal-store, the store its WAL is in.
func (s *storeFlags) catalogOptions(ctx context.Context) (core.CatalogOptions, error) {
	opts := core.CatalogOptions{Path: s.path}
	if s.walStore != "" {
		w, err := s.open(ctx, s.walStore)
		if err != nil {
			return core.CatalogOptions{}, err
		}
		opts.WalStore = w
	}
	return opts, nil
}
