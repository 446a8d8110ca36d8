#!lua flags=no-writes,allow-key-locking
--[[ list-groups: one page of the names of the groups that hold a waiting or active job: the
'g:<group>' counters of meta, walked with HSCAN (hash-page.lua; group-info then reads their
state).

KEYS[1] meta  hash  config and counters (meta.lua)

ARGV[1] limit (page size)
ARGV[2...] the HSCAN position where the page starts (none: the first page)

Returns {1, {where the next page starts} ({} = no more), {group...}}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include order
-- @include hash-page

if not hasQueue(KEYS[1]) then return { QUEUE_NOT_FOUND } end
local names, next = hashPage(KEYS[1], 'g:*', tonumber(ARGV[1]), ARGV[2] or '0', ARGV[3] or '', ARGV[4] or '',
  ARGV[5], function(field) return string.sub(field, 3) end)
return { 1, next, names }
