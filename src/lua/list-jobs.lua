#!lua flags=no-writes,allow-key-locking
--[[ list-jobs: one page of a queue's jobs in one state.
Order: waiting with a group, as they will run; waiting without a group, hash order (HSCAN);
delayed by runAt; active by lease deadline; completed, failed, cancelled and expired newest first. Equal
scores list by member (active: by id), as Redis orders them.

KEYS[1] meta       hash  config
KEYS[2] jobs       hash  id -> job record
KEYS[3] active     zset  lease members '<id> <token><group>' by deadline
KEYS[4] delayed    zset  '<id> <group>' by runAt
KEYS[5] completed  zset  kept completed ids by finishedAt
KEYS[6] failed     zset  kept failed ids by finishedAt
KEYS[7] cancelled  zset  kept cancelled ids by finishedAt
KEYS[8] expired    zset  kept expired ids by finishedAt
KEYS[9] group      zset  the group's jobs (only with a group)

ARGV[1] state: waiting | delayed | active | completed | failed | cancelled | expired
ARGV[2] limit (page size)
ARGV[3] group filter for the other states ('' = all groups)
ARGV[4...] where the page starts (none: the first page): for a sorted set the score and member
        (active: the id; a lease member holds its token) of the last job listed before; for
        waiting without a group an HSCAN position (hash-page.lua)

Returns {1, {where the next page starts} ({} = no more), {{id, state JSON, data, state, startedAt, expiresAt, maxAttempts}...}}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include view
-- @include order
-- @include zset-page
-- @include hash-page

local K = { jobs = KEYS[2], active = KEYS[3], group = KEYS[9] }
local wanted, limit, group = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local M = openMeta(KEYS[1])
if not M.cfg then return { QUEUE_NOT_FOUND } end

local function viewIf(id, raw)
  local view = jobView(K, M, id, raw)
  if view[4] == wanted and (group == '' or decodeJob(raw).g == group) then return view end
end

if wanted == 'waiting' and not K.group then
  local views, next = hashPage(K.jobs, '*', limit, ARGV[4] or '0', ARGV[5] or '', ARGV[6] or '', ARGV[7], viewIf)
  return { 1, next, views }
end

local source = ({ delayed = KEYS[4], active = KEYS[3], completed = KEYS[5], failed = KEYS[6],
  cancelled = KEYS[7], expired = KEYS[8], waiting = K.group })[wanted]
local reverse = wanted == 'completed' or wanted == 'failed' or wanted == 'cancelled' or wanted == 'expired'
local idOfMember = ({ waiting = idOf, delayed = function(m) return (splitMember(m)) end,
  active = function(m) return (splitLease(m)) end })[wanted] or function(m) return m end
local keyOf = wanted == 'active' and idOfMember or nil
local members = zsetPage(source, reverse, limit, ARGV[4], ARGV[5], keyOf)
local ids, views = {}, {}
for i, entry in ipairs(members) do ids[i] = idOfMember(entry[1]) end
if #ids > 0 then
  local raws = redis.call('HMGET', K.jobs, unpack(ids))
  for i, id in ipairs(ids) do
    local view = raws[i] and viewIf(id, raws[i])
    if view then views[#views + 1] = view end
  end
end
local next = {}
if #members == limit then
  local lastMember = members[limit]
  next = { lastMember[2], keyOf and keyOf(lastMember[1]) or lastMember[1] }
end
return { 1, next, views }
