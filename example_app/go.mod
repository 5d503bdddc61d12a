module github.com/saguaro-go/saguaro/example_app

go 1.26.0

replace (
	github.com/saguaro-go/saguaro => ../
	github.com/saguaro-go/saguaro/mcpredis => ../mcpredis
)

require (
	github.com/go-chi/chi/v5 v5.5.0
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/redis/go-redis/v9 v9.23.0
	github.com/saguaro-go/saguaro v0.0.0-00010101000000-000000000000
	github.com/saguaro-go/saguaro/mcpredis v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/MicahParks/jwkset v0.11.4 // indirect
	github.com/MicahParks/keyfunc/v3 v3.9.2 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-chi/cors v1.2.2 // indirect
	github.com/go-chi/httplog/v3 v3.3.0 // indirect
	github.com/go-chi/httprate v0.16.1 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.14.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)
