package redisstore

import "github.com/redis/go-redis/v9"

// applyScript applies one batch. KEYS: version, epoch, trust, the five heat
// hashes, sessions, the writer's last Seq, the log. ARGV: writer, seq,
// dedup window (s), log length, an epoch for an empty store, the channel,
// the counts of trust, heat and session deltas, then the deltas: trust as
// (id, base, add, low, high) in billionths, heat as (id, five counters;
// a first counter of -1 deletes the block's heat),
// sessions as (key, "p" or "d", base version, updated, data).
//
// It returns {1, version, epoch} when it applied the batch, {0, version,
// epoch} for a batch applied before, {-1, last} for one that skips a Seq.
// Everything is checked before the first write: a script that fails half
// way keeps its writes.
//
// Each change is logged as the values its keys hold after it (not the
// deltas), in records "t" LP(id) LP(trust), "s" LP(key) LP(value) and
// "d" LP(key), where LP(x) is the length of x, a colon, and x: binary-safe
// for any id.
var applyScript = redis.NewScript(`#!lua
local last = tonumber(redis.call('GET', KEYS[10]) or '0')
local seq = tonumber(ARGV[2])
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
if seq <= last then
  return {0, v, redis.call('GET', KEYS[2]) or ''}
end
if seq ~= last + 1 then
  return {-1, last, ''}
end
local top = redis.call('XREVRANGE', KEYS[11], '+', '-', 'COUNT', 1)
if #top > 0 and tonumber(string.match(top[1][1], '^(%d+)-')) > v then
  return redis.error_reply('CONTEXTASM the log is ahead of the version: the keys were changed by hand')
end
v = v + 1
redis.call('SET', KEYS[1], v)
redis.call('SET', KEYS[10], seq, 'EX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[5], 'NX')
local function lp(s) return #s .. ':' .. s end
local rec = {}
local i = 10
for _ = 1, tonumber(ARGV[7]) do
  local id = ARGV[i]
  local cur = redis.call('HGET', KEYS[3], id)
  if cur then cur = tonumber(cur) else cur = tonumber(ARGV[i+1]) end
  cur = cur + tonumber(ARGV[i+2])
  local lo, hi = tonumber(ARGV[i+3]), tonumber(ARGV[i+4])
  if cur < lo then cur = lo end
  if cur > hi then cur = hi end
  local s = string.format('%d', cur)
  redis.call('HSET', KEYS[3], id, s)
  rec[#rec+1] = 't' .. lp(id) .. lp(s)
  i = i + 5
end
for _ = 1, tonumber(ARGV[8]) do
  if tonumber(ARGV[i+1]) < 0 then
    for k = 1, 5 do redis.call('HDEL', KEYS[3+k], ARGV[i]) end
  else
    for k = 1, 5 do
      local n = tonumber(ARGV[i+k])
      if n ~= 0 then redis.call('HINCRBY', KEYS[3+k], ARGV[i], n) end
    end
  end
  i = i + 6
end
for _ = 1, tonumber(ARGV[9]) do
  local key = ARGV[i]
  if ARGV[i+1] == 'd' then
    if redis.call('HDEL', KEYS[9], key) == 1 then rec[#rec+1] = 'd' .. lp(key) end
  else
    local cur = redis.call('HGET', KEYS[9], key)
    local ver = 0
    if cur then ver = tonumber(string.match(cur, '^(%d+) ')) end
    if ver == tonumber(ARGV[i+2]) then
      local val = string.format('%d', ver + 1) .. ' ' .. ARGV[i+3] .. ' ' .. ARGV[i+4]
      redis.call('HSET', KEYS[9], key, val)
      rec[#rec+1] = 's' .. lp(key) .. lp(val)
    end
  end
  i = i + 5
end
redis.call('XADD', KEYS[11], 'MAXLEN', '~', ARGV[4], v .. '-0', 'w', ARGV[1], 's', ARGV[2], 'c', table.concat(rec))
redis.call('PUBLISH', ARGV[6], v)
return {1, v, redis.call('GET', KEYS[2])}
`)

// announceScript records announced global blocks and publishes them.
// KEYS: the global blocks, their count. ARGV: the channel, the payload, the
// number of declared blocks, then (id, stored value) per declared block,
// then the forgotten ids. The message is "COUNT PAYLOAD".
var announceScript = redis.NewScript(`#!lua
local n = tonumber(ARGV[3])
local i = 4
for _ = 1, n do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i+1])
  i = i + 2
end
while i <= #ARGV do
  redis.call('HDEL', KEYS[1], ARGV[i])
  i = i + 1
end
local v = redis.call('INCR', KEYS[2])
redis.call('PUBLISH', ARGV[1], v .. ' ' .. ARGV[2])
return v
`)
