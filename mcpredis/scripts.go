package mcpredis

import "github.com/redis/go-redis/v9"

// The store's operations are Lua scripts, so that each is atomic on the
// Redis server however many replicas run it at once. Keys (P is
// Options.Prefix):
//
//	P s:<id>      hash: the session's record; field seq counts its events
//	P e:<id>      stream: the session's GET stream log, entry ids "<seq>-0"
//	P live        set: initialized sessions (they hear list_changed)
//	P sub:<uri>   set: sessions subscribed to uri
//	P r:<replica> string: a live replica's relay URL, expiring (heartbeat)
//	P k:<name>    string: a shared secret (SharedKey)
//	P gen         string: set by every beat; missing means Redis lost its data
//	P fresh       string: present for a short grace after a replica found it lost
//	P bus         channel: notices to every replica
//
// Bus messages are "e <session> <seq> <data>", "c <origin> <kind> <uri>"
// and "m <session> <from> <to>".
//
// All keys of one script are built from the prefix inside it, which
// suits one Redis server (or a primary with replicas); Redis Cluster,
// which needs every key declared and in one slot, is not supported.

// luaAppend is shared by append and announce: add one event to a
// session's log, bounded, with the record's lifetime, and tell the bus.
const luaAppend = `
local function append(p, id, data, maxlen)
  local rec = p .. 's:' .. id
  local ttl = redis.call('PTTL', rec)
  if ttl == -2 then return -1 end
  local n = redis.call('HINCRBY', rec, 'seq', 1)
  local log = p .. 'e:' .. id
  redis.call('XADD', log, 'MAXLEN', maxlen, n .. '-0', 'd', data)
  if ttl > 0 then redis.call('PEXPIRE', log, ttl) end
  redis.call('PUBLISH', p .. 'bus', 'e ' .. id .. ' ' .. n .. ' ' .. data)
  return n
end
`

// appendScript: KEYS none; ARGV prefix, id, data, maxlen. Returns the
// seq, or -1 when the session is unknown.
var appendScript = redis.NewScript(luaAppend + `
return append(ARGV[1], ARGV[2], ARGV[3], ARGV[4])
`)

// announceScript: ARGV prefix, uri ("" for list changes), data, maxlen,
// origin, kind. Appends data to every session concerned, drops set
// members whose record is gone, and tells the bus. Returns how many
// sessions it reached.
var announceScript = redis.NewScript(luaAppend + `
local p, uri, data, maxlen = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local set = p .. 'live'
if uri ~= '' then set = p .. 'sub:' .. uri end
local n = 0
for _, id in ipairs(redis.call('SMEMBERS', set)) do
  if append(p, id, data, maxlen) < 0 then
    redis.call('SREM', set, id)
  else
    n = n + 1
  end
end
redis.call('PUBLISH', p .. 'bus', 'c ' .. ARGV[5] .. ' ' .. ARGV[6] .. ' ' .. uri)
return n
`)

// saveScript: ARGV prefix, id, mode ("create" or "save"), owner, ttl ms,
// then the record's fields: identity, rev, client, level, init, subs
// (JSON array), state, movable, seq. A save needs the record to exist;
// both refuse a record another replica owns. Keeps the live and sub:
// sets in step with the record. Returns 1, or 0 when unknown, or -2 when
// owned by another replica.
var saveScript = redis.NewScript(`
local p, id, mode, owner, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local rec = p .. 's:' .. id
local cur = redis.call('HMGET', rec, 'owner', 'subs', 'seq')
if cur[1] == false then
  if mode == 'save' then return 0 end
elseif cur[1] ~= owner and cur[1] ~= '' then
  return -2
end
if cur[2] then
  for _, u in ipairs(cjson.decode(cur[2])) do redis.call('SREM', p .. 'sub:' .. u, id) end
end
local subs = ARGV[11]
for _, u in ipairs(cjson.decode(subs)) do redis.call('SADD', p .. 'sub:' .. u, id) end
if ARGV[10] == '1' then redis.call('SADD', p .. 'live', id) else redis.call('SREM', p .. 'live', id) end
local seq = tonumber(ARGV[14])
if cur[3] and tonumber(cur[3]) > seq then seq = tonumber(cur[3]) end
redis.call('HSET', rec, 'owner', owner, 'identity', ARGV[6], 'rev', ARGV[7], 'client', ARGV[8],
  'level', ARGV[9], 'init', ARGV[10], 'subs', subs, 'state', ARGV[12], 'movable', ARGV[13], 'seq', seq)
redis.call('PEXPIRE', rec, ttl)
redis.call('PEXPIRE', p .. 'e:' .. id, ttl)
return 1
`)

// touchScript: ARGV prefix, id, ttl ms. Returns 0 when unknown.
var touchScript = redis.NewScript(`
local p, id, ttl = ARGV[1], ARGV[2], ARGV[3]
if redis.call('PEXPIRE', p .. 's:' .. id, ttl) == 0 then return 0 end
redis.call('PEXPIRE', p .. 'e:' .. id, ttl)
return 1
`)

// claimScript: ARGV prefix, id, from, to. Returns 1 when to owns the
// session now, 0 when its owner is no longer from, -1 when unknown.
var claimScript = redis.NewScript(`
local p, id, from, to = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local rec = p .. 's:' .. id
local owner = redis.call('HGET', rec, 'owner')
if owner == false then return -1 end
if owner ~= from then return 0 end
redis.call('HSET', rec, 'owner', to)
if from ~= '' then redis.call('PUBLISH', p .. 'bus', 'm ' .. id .. ' ' .. from .. ' ' .. to) end
return 1
`)

// releaseScript: ARGV prefix, id, owner. Clears the owner if it is still
// owner.
var releaseScript = redis.NewScript(`
local rec = ARGV[1] .. 's:' .. ARGV[2]
if redis.call('HGET', rec, 'owner') == ARGV[3] then redis.call('HSET', rec, 'owner', '') end
return 1
`)

// endScript: ARGV prefix, id. Forgets the session and its set entries.
var endScript = redis.NewScript(`
local p, id = ARGV[1], ARGV[2]
local rec = p .. 's:' .. id
local subs = redis.call('HGET', rec, 'subs')
if subs then
  for _, u in ipairs(cjson.decode(subs)) do redis.call('SREM', p .. 'sub:' .. u, id) end
end
redis.call('SREM', p .. 'live', id)
redis.call('DEL', rec, p .. 'e:' .. id)
return 1
`)

// beatScript: ARGV key, url, ttl ms, prefix, grace ms, beaten ("1" when
// this replica has beaten before). Returns 1 when the key was there (the
// store still knows this replica), 0 when it was not. P gen marks a store
// that has seen a replica; a replica that had beaten and finds its key
// gone sets P fresh for grace, the time the replicas take to record their
// sessions again (see Cluster.Load).
var beatScript = redis.NewScript(`
local had = redis.call('EXISTS', ARGV[1])
redis.call('SET', ARGV[1], ARGV[2], 'PX', ARGV[3])
redis.call('SET', ARGV[4] .. 'gen', '1', 'NX')
if had == 0 and ARGV[6] == '1' then
  redis.call('SET', ARGV[4] .. 'fresh', '1', 'PX', ARGV[5])
end
return had
`)

// locateScript: ARGV the replica's key, prefix. Returns {its relay URL,
// "" when it is not beating; P fresh exists; P gen exists}.
var locateScript = redis.NewScript(`
local p = ARGV[2]
return {redis.call('GET', ARGV[1]) or '', redis.call('EXISTS', p .. 'fresh'), redis.call('EXISTS', p .. 'gen')}
`)

// loadScript: ARGV prefix, id. Returns {record as HGETALL, the owner's
// relay URL ("" when it has none or is not beating), P fresh exists, P
// gen exists}: one round trip for what a relay needs.
var loadScript = redis.NewScript(`
local p, id = ARGV[1], ARGV[2]
local rec = redis.call('HGETALL', p .. 's:' .. id)
local url = ''
for i = 1, #rec, 2 do
  if rec[i] == 'owner' and rec[i + 1] ~= '' then
    url = redis.call('GET', p .. 'r:' .. rec[i + 1]) or ''
  end
end
return {rec, url, redis.call('EXISTS', p .. 'fresh'), redis.call('EXISTS', p .. 'gen')}
`)
