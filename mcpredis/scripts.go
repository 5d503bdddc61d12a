package mcpredis

import "github.com/redis/go-redis/v9"

// The store's operations are Lua scripts, each atomic on its Redis
// server, each declaring every key it touches, all of them in one hash
// slot: a session's keys share the tag of its id, and the keys the
// replicas share (the registry, the changes) the tag {c}. None loops over
// sessions; the longest loops over the live replicas (the registry) or
// over the holes of one session's log, both bounded and small.
//
// Every script checks what it needs before it writes anything, so that
// one that refuses (or fails) leaves no partial write.
//
// Keys (P is Options.Prefix):
//
//	P s{<id>}     hash: a session's record: owner, identity, rev, client,
//	              level, init, subs, state, movable, seq (the highest event
//	              number it was saved with), lseq (the number of the last
//	              event of its log)
//	P e{<id>}     list: the session's GET stream log, oldest first, the
//	              last element numbered lseq: a change's number (digits), a
//	              message of the session's own (JSON), or "0" for an event
//	              that was not logged
//	P {c}:gen     string: the store's epoch; missing means the store lost
//	              its data
//	P {c}:recov   string: "<epoch> <since ms>" while the replicas record
//	              their sessions again after a loss
//	P {c}:reg     hash: the replicas: id → "<beat until ms> <epoch they
//	              recorded their sessions in> <relay URL>"
//	P {c}:log     stream: the changes, entry ids "<n>-0", fields n
//	              (notification), u (URI), d (message), g (epoch)
//	P {c}:p:<h>   string: a change of kind h waits for its notice (the
//	              time it was first announced), expiring
//	P {c}:d:<h>   string: when the last notice of kind h was sent, expiring
//	P {c}:k:<n>   string: a shared secret (SharedKey)
//
// Channels (sharded on Redis 7 and later, plain before): P {c}:chg carries
// every change to every replica ("<n> <epoch> <notification>\n<URI
// length>\n<URI><message>"), P {c}:r:<replica> what one replica must
// hear ("m <session>": another replica claimed it).

// timeMS is a Lua snippet: now, the server's time in milliseconds.
const timeMS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// recovering is a Lua function: whether the store is recording its
// sessions again after a loss: it lost its data and no replica has
// beaten since (gen missing), or it is within ttl of the loss, or a live
// replica has not recorded its sessions again yet. When the recovery is
// over it forgets it.
const recovering = `
local function recovering(genKey, regKey, recovKey, now, ttl)
  local gen = redis.call('GET', genKey)
  if not gen then return 1 end
  local r = redis.call('GET', recovKey)
  if not r then return 0 end
  local epoch, since = string.match(r, '^(%S+) (%d+)$')
  if epoch ~= gen then
    redis.call('DEL', recovKey)
    return 0
  end
  if now < tonumber(since) + ttl then return 1 end
  local reg = redis.call('HGETALL', regKey)
  for i = 2, #reg, 2 do
    local until_, done = string.match(reg[i], '^(%d+) (%S+)')
    if until_ and tonumber(until_) > now and done ~= gen then return 1 end
  end
  redis.call('DEL', recovKey)
  return 0
end
`

// saveScript: KEYS record, log; ARGV mode ("create" or "save"), owner,
// ttl ms, then the record's fields: identity, rev, client, level, init,
// subs (JSON array), state, movable, seq. A save needs the record to
// exist; both refuse a record another replica owns. Returns 1, or 0 when
// unknown, or -2 when owned by another replica.
var saveScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'owner', 'seq')
if cur[1] == false then
  if ARGV[1] == 'save' then return 0 end
elseif cur[1] ~= ARGV[2] and cur[1] ~= '' then
  return -2
end
local seq = tonumber(ARGV[12])
if cur[2] and tonumber(cur[2]) > seq then seq = tonumber(cur[2]) end
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'identity', ARGV[4], 'rev', ARGV[5], 'client', ARGV[6],
  'level', ARGV[7], 'init', ARGV[8], 'subs', ARGV[9], 'state', ARGV[10], 'movable', ARGV[11], 'seq', seq)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
`)

// touchScript: KEYS record, log; ARGV ttl ms. Returns 0 when unknown.
var touchScript = redis.NewScript(`
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1
`)

// claimScript: KEYS record; ARGV from, to. Returns 1 when to owns the
// session now, 0 when its owner is no longer from, -1 when unknown.
var claimScript = redis.NewScript(`
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == false then return -1 end
if owner ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[2])
return 1
`)

// releaseScript: KEYS record; ARGV owner. Clears the owner if it is
// still owner.
var releaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then redis.call('HSET', KEYS[1], 'owner', '') end
return 1
`)

// appendScript: KEYS record, log; ARGV owner, seq, element, max. Adds
// event seq to the session's log, after "0" for each number skipped
// since the last one (a log further behind than max starts afresh),
// bounded to max elements; a log it creates gets the record's lifetime
// (Save and Touch keep both). Returns 1, 0 when seq is logged already, -1
// when the session is unknown, -2 when another replica owns it. Four
// calls on the common path: it runs once per session a change reaches.
var appendScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'owner', 'lseq')
if cur[1] == false then return -1 end
if cur[1] ~= ARGV[1] then return -2 end
local seq, max = tonumber(ARGV[2]), tonumber(ARGV[4])
local last = tonumber(cur[2] or '0')
if last > 0 and seq <= last then return 0 end
local gap = seq - last - 1
local holes = 0
if last == 0 or gap >= max then
  if last > 0 then redis.call('DEL', KEYS[2]) end
elseif gap > 0 then
  local h = {}
  for i = 1, gap do h[i] = '0' end
  redis.call('RPUSH', KEYS[2], unpack(h))
  holes = gap
end
local len = redis.call('RPUSH', KEYS[2], ARGV[3])
if len > max then redis.call('LTRIM', KEYS[2], -max, -1) end
redis.call('HSET', KEYS[1], 'lseq', seq)
if len == holes + 1 then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
end
return 1
`)

// beatScript: KEYS gen, reg, recov; ARGV this replica's id, its relay
// URL, ttl ms, the epoch it knows ("" at its first beat), a new epoch
// (used when the store has none), the epoch it recorded its sessions in.
// It notes that the replica lives until now+ttl, starts the recovery of
// a store that lost its data (gen missing, or another epoch than the
// replica knew, while it did know one), forgets replicas dead for more
// than ttl, and returns {epoch, now, recovering, reg as HGETALL}.
var beatScript = redis.NewScript(timeMS + recovering + `
local ttl = tonumber(ARGV[3])
local gen = redis.call('GET', KEYS[1])
if not gen then
  gen = ARGV[5]
  redis.call('SET', KEYS[1], gen)
  if ARGV[4] ~= '' then redis.call('SET', KEYS[3], gen .. ' ' .. now) end
elseif ARGV[4] ~= '' and ARGV[4] ~= gen then
  local r = redis.call('GET', KEYS[3])
  if not r or string.match(r, '^(%S+)') ~= gen then redis.call('SET', KEYS[3], gen .. ' ' .. now) end
end
local done = ARGV[6]
if ARGV[4] == '' then done = gen end
redis.call('HSET', KEYS[2], ARGV[1], (now + ttl) .. ' ' .. done .. ' ' .. ARGV[2])
local reg = redis.call('HGETALL', KEYS[2])
local out = {}
for i = 1, #reg, 2 do
  local until_ = tonumber(string.match(reg[i + 1], '^(%d+)') or '0')
  if until_ + ttl < now then
    redis.call('HDEL', KEYS[2], reg[i])
  else
    out[#out + 1] = reg[i]
    out[#out + 1] = reg[i + 1]
  end
end
return {gen, now, recovering(KEYS[1], KEYS[2], KEYS[3], now, ttl), out}
`)

// locateScript: KEYS gen, reg, recov; ARGV a replica's id, ttl ms.
// Returns {its relay URL, "" when it is not beating; recovering}.
var locateScript = redis.NewScript(timeMS + recovering + `
local v = redis.call('HGET', KEYS[2], ARGV[1])
if v then
  local until_, url = string.match(v, '^(%d+) %S+ (.*)$')
  if until_ and tonumber(until_) > now then return {url, 0} end
end
return {'', recovering(KEYS[1], KEYS[2], KEYS[3], now, tonumber(ARGV[2]))}
`)

// recoveringScript: KEYS gen, reg, recov; ARGV ttl ms. Returns
// recovering.
var recoveringScript = redis.NewScript(timeMS + recovering + `
return recovering(KEYS[1], KEYS[2], KEYS[3], now, tonumber(ARGV[1]))
`)

// announceScript: KEYS pending; ARGV how long the notice may wait (ms).
// A change of this kind waits for its notice, which this replica sends
// (it leads: {1, now}), or which another replica, or an earlier call,
// already leads and sends after now ({0, now, ms the wait has left}).
var announceScript = redis.NewScript(timeMS + `
if redis.call('SET', KEYS[1], now, 'NX', 'PX', ARGV[1]) then return {1, now} end
return {0, now, redis.call('PTTL', KEYS[1])}
`)

// publishScript: KEYS pending, done, log, gen; ARGV notification, URI,
// message, the log's length, how long done is kept (ms), the channel,
// "1" for a sharded channel. Numbers the change after the log's last,
// logs it, tells every replica, and ends the wait of its kind. Returns
// its number.
var publishScript = redis.NewScript(timeMS + `
local top = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
local n = 1
if top[1] then n = tonumber(string.match(top[1][1], '^(%d+)')) + 1 end
local gen = redis.call('GET', KEYS[4]) or '-'
redis.call('DEL', KEYS[1])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], n .. '-0', 'n', ARGV[1], 'u', ARGV[2], 'd', ARGV[3], 'g', gen)
redis.call('SET', KEYS[2], now, 'PX', ARGV[5])
local msg = n .. ' ' .. gen .. ' ' .. ARGV[1] .. '\n' .. #ARGV[2] .. '\n' .. ARGV[2] .. ARGV[3]
if ARGV[7] == '1' then
  redis.call('SPUBLISH', ARGV[6], msg)
else
  redis.call('PUBLISH', ARGV[6], msg)
end
return n
`)

// checkScript: KEYS pending, done; ARGV when this replica announced
// (ms). Returns {1} when a notice went out since, {0, ms left} while the
// change still waits for its notice, {2} when it waits no more and none
// went out (the replica that led is gone: announce again).
var checkScript = redis.NewScript(`
local d = tonumber(redis.call('GET', KEYS[2]) or '0')
if d >= tonumber(ARGV[1]) then return {1} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then return {0, ttl} end
return {2}
`)
