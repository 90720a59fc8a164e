-- VMC (Virtual Motion Capture protocol: OSC over UDP, 39539/39540) for
-- Wireshark and tshark, and the OSC tracker streams made from it: VRChat's
-- OSC trackers (UDP 9000) and Virtual Motion Tracker (VMT, UDP 39570).
--
-- Decodes OSC bundles (nesting bounded at 8 levels, as our decoder does) and
-- messages with every argument type, then types the VMC messages (bones,
-- root, blendshapes, Apply, OK, T), VRChat's /tracking/trackers/N/position
-- and /rotation (and VRChat's own /tracking/vrsystem/*/pose), and VMT's
-- /VMT/{Room,Raw,Joint,Follow}/{Unity,UEuler,Driver} poses and /VMT/Out/Log.
-- Never raises a Lua error: every read is checked against the buffer, and
-- what is not OSC gets expert info.
--
-- Install: copy into ~/.local/lib/wireshark/plugins/ (see README.md here).

local vmc = Proto("vmc", "Virtual Motion Capture protocol (OSC)")

local MAX_DEPTH = 8

local f = {
  bundle = ProtoField.string("vmc.bundle", "Bundle"),
  timetag = ProtoField.uint64("vmc.bundle.timetag", "Time tag", base.HEX),
  message = ProtoField.string("vmc.message", "Message"),
  address = ProtoField.string("vmc.address", "Address"),
  typetag = ProtoField.string("vmc.typetag", "Type tag"),
  arg_int = ProtoField.int32("vmc.arg.int", "Int"),
  arg_float = ProtoField.double("vmc.arg.float", "Float"),
  arg_string = ProtoField.string("vmc.arg.string", "String"),
  arg_blob = ProtoField.bytes("vmc.arg.blob", "Blob"),
  arg_int64 = ProtoField.int64("vmc.arg.int64", "Int64"),
  arg_double = ProtoField.double("vmc.arg.double", "Double"),
  bone_name = ProtoField.string("vmc.bone.name", "Bone"),
  px = ProtoField.double("vmc.bone.px", "Position x"),
  py = ProtoField.double("vmc.bone.py", "Position y"),
  pz = ProtoField.double("vmc.bone.pz", "Position z"),
  qx = ProtoField.double("vmc.bone.qx", "Rotation x"),
  qy = ProtoField.double("vmc.bone.qy", "Rotation y"),
  qz = ProtoField.double("vmc.bone.qz", "Rotation z"),
  qw = ProtoField.double("vmc.bone.qw", "Rotation w"),
  root_name = ProtoField.string("vmc.root.name", "Root"),
  blend_name = ProtoField.string("vmc.blend.name", "Blendshape"),
  blend_value = ProtoField.double("vmc.blend.value", "Blendshape value"),
  time = ProtoField.double("vmc.time", "Sender time (s)"),
  ok_loaded = ProtoField.int32("vmc.ok.loaded", "Avatar loaded"),
  messages = ProtoField.uint32("vmc.messages", "Messages"),
  -- VRChat OSC trackers: Unity axes, metres, Euler degrees (Z, then X, then Y).
  tracker_id = ProtoField.string("vmc.tracker.id", "Tracker"),
  tracker_px = ProtoField.double("vmc.tracker.px", "Position x"),
  tracker_py = ProtoField.double("vmc.tracker.py", "Position y"),
  tracker_pz = ProtoField.double("vmc.tracker.pz", "Position z"),
  tracker_rx = ProtoField.double("vmc.tracker.rx", "Rotation x (degrees)"),
  tracker_ry = ProtoField.double("vmc.tracker.ry", "Rotation y (degrees)"),
  tracker_rz = ProtoField.double("vmc.tracker.rz", "Rotation z (degrees)"),
  -- Virtual Motion Tracker.
  vmt_space = ProtoField.string("vmc.vmt.space", "VMT space"),
  vmt_form = ProtoField.string("vmc.vmt.form", "VMT form"),
  vmt_index = ProtoField.int32("vmc.vmt.index", "VMT index"),
  vmt_enable = ProtoField.int32("vmc.vmt.enable", "VMT enable", base.DEC, {
    [0] = "off", [1] = "tracker", [2] = "left controller", [3] = "right controller",
    [4] = "tracking reference", [5] = "left controller (Index)", [6] = "right controller (Index)",
  }),
  vmt_timeoffset = ProtoField.double("vmc.vmt.timeoffset", "VMT time offset (s)"),
  vmt_px = ProtoField.double("vmc.vmt.px", "Position x"),
  vmt_py = ProtoField.double("vmc.vmt.py", "Position y"),
  vmt_pz = ProtoField.double("vmc.vmt.pz", "Position z"),
  vmt_qx = ProtoField.double("vmc.vmt.qx", "Rotation x"),
  vmt_qy = ProtoField.double("vmc.vmt.qy", "Rotation y"),
  vmt_qz = ProtoField.double("vmc.vmt.qz", "Rotation z"),
  vmt_qw = ProtoField.double("vmc.vmt.qw", "Rotation w"),
  vmt_rx = ProtoField.double("vmc.vmt.rx", "Rotation x (degrees)"),
  vmt_ry = ProtoField.double("vmc.vmt.ry", "Rotation y (degrees)"),
  vmt_rz = ProtoField.double("vmc.vmt.rz", "Rotation z (degrees)"),
  vmt_serial = ProtoField.string("vmc.vmt.serial", "VMT serial"),
  vmt_log_stat = ProtoField.int32("vmc.vmt.log.stat", "VMT log status"),
  vmt_log_msg = ProtoField.string("vmc.vmt.log.msg", "VMT log message"),
}
vmc.fields = {}
for _, v in pairs(f) do table.insert(vmc.fields, v) end

local e_malformed = ProtoExpert.new("vmc.malformed", "Not a well-formed OSC packet",
  expert.group.MALFORMED, expert.severity.ERROR)
vmc.experts = { e_malformed }

local prefs = vmc.prefs
prefs.port1 = Pref.uint("UDP port", 39539, "A UDP port of VMC traffic")
prefs.port2 = Pref.uint("UDP port (second)", 39540, "Another UDP port of VMC traffic")
prefs.port3 = Pref.uint("VRChat OSC port", 9000, "The UDP port VRChat takes OSC trackers on")
prefs.port4 = Pref.uint("VMT port", 39570, "The UDP port Virtual Motion Tracker takes poses on")

local Fail = {}
local function fail(reason)
  error(setmetatable({ reason = reason }, Fail), 0)
end

-- An OSC string at `at` within [.., to): its text and the offset after its padding.
local function ostring(buf, at, to)
  local i = at
  while i < to and buf(i, 1):uint() ~= 0 do i = i + 1 end
  if i >= to then fail(string.format("unterminated string at byte %d", at)) end
  local text = i > at and buf(at, i - at):raw() or ""
  local after = at + (math.floor((i - at) / 4) + 1) * 4
  if after > to then fail(string.format("string padding runs past the end at byte %d", at)) end
  return text, after
end

local SHORT = {
  ["/VMC/Ext/Bone/Pos"] = "Bone/Pos", ["/VMC/Ext/Root/Pos"] = "Root/Pos",
  ["/VMC/Ext/Blend/Val"] = "Blend/Val", ["/VMC/Ext/Blend/Apply"] = "Apply",
  ["/VMC/Ext/OK"] = "OK", ["/VMC/Ext/T"] = "T",
}

-- Which family an address belongs to (the protocol column), and its short
-- name (the info column): "Tracker/position", "VMT/Room/Unity", "Bone/Pos".
local function classify(addr)
  if SHORT[addr] then return "vmc", SHORT[addr] end
  local _, kind = addr:match("^/tracking/trackers/([^/]+)/([^/]+)$")
  if kind then return "vrchat", "Tracker/" .. kind end
  if addr:match("^/tracking/") then return "vrchat", addr:sub(2) end
  if addr:match("^/VMT/") then return "vmt", addr:sub(2) end
  if addr:match("^/VMC/") then return "vmc", "other" end
  return "other", "other"
end

-- VMT pose messages: space, then form and how many floats follow the time offset.
local VMT_SPACE = { Room = true, Raw = true, Joint = true, Follow = true }
local VMT_FORM = { Unity = 7, UEuler = 6, Driver = 7 }

-- Typed fields of VRChat and VMT messages (args already read and checked).
local function typed_tracker(addr, args, node, num)
  local id, kind = addr:match("^/tracking/trackers/([^/]+)/([^/]+)$")
  if id and (kind == "position" or kind == "rotation") and #args >= 3 and num(1) and num(2) and num(3) then
    node:add(f.tracker_id, id)
    local fields = kind == "position" and { f.tracker_px, f.tracker_py, f.tracker_pz }
      or { f.tracker_rx, f.tracker_ry, f.tracker_rz }
    for i = 1, 3 do node:add(fields[i], args[i].r, args[i].v) end
    node:append_text(": " .. id)
    return
  end
  local vr = addr:match("^/tracking/vrsystem/([^/]+)/pose$")
  if vr and #args >= 6 then
    for i = 1, 6 do if not num(i) then return end end
    node:add(f.tracker_id, vr)
    local fields = { f.tracker_px, f.tracker_py, f.tracker_pz, f.tracker_rx, f.tracker_ry, f.tracker_rz }
    for i = 1, 6 do node:add(fields[i], args[i].r, args[i].v) end
    node:append_text(": " .. vr)
    return
  end
  local space, form = addr:match("^/VMT/(%a+)/(%a+)$")
  local floats = VMT_FORM[form]
  if space and VMT_SPACE[space] and floats and #args >= 3 + floats
    and args[1].t == "i" and args[2].t == "i" then
    for i = 3, 3 + floats do if not num(i) then return end end
    node:add(f.vmt_space, space)
    node:add(f.vmt_form, form)
    node:add(f.vmt_index, args[1].r, args[1].v)
    node:add(f.vmt_enable, args[2].r, args[2].v)
    node:add(f.vmt_timeoffset, args[3].r, args[3].v)
    local fields = floats == 6 and { f.vmt_px, f.vmt_py, f.vmt_pz, f.vmt_rx, f.vmt_ry, f.vmt_rz }
      or { f.vmt_px, f.vmt_py, f.vmt_pz, f.vmt_qx, f.vmt_qy, f.vmt_qz, f.vmt_qw }
    for i = 1, floats do node:add(fields[i], args[3 + i].r, args[3 + i].v) end
    local serial = args[4 + floats]
    if (space == "Joint" or space == "Follow") and serial and serial.t == "s" then
      node:add(f.vmt_serial, serial.r, serial.v)
    end
    node:append_text(string.format(": index %d", args[1].v))
    return
  end
  if addr == "/VMT/Out/Log" and #args >= 2 and args[1].t == "i" and args[2].t == "s" then
    node:add(f.vmt_log_stat, args[1].r, args[1].v)
    node:add(f.vmt_log_msg, args[2].r, args[2].v)
  end
end

-- Parses (and, with a tree, shows) the message in [at, to).
local function message(buf, at, to, tree, ctx)
  local addr, p = ostring(buf, at, to)
  if addr:sub(1, 1) ~= "/" then fail(string.format("address does not start with '/' at byte %d", at)) end
  local args, types = {}, ""
  if p < to then
    local tags
    tags, p = ostring(buf, p, to)
    if tags:sub(1, 1) ~= "," then fail(string.format("type tag does not start with ',' at byte %d", p)) end
    types = tags:sub(2)
    for t in types:gmatch(".") do
      local need = ({ i = 4, f = 4, h = 8, d = 8, t = 8, c = 4, r = 4, m = 4 })[t]
      if need then
        if p + need > to then fail(string.format("argument '%s' runs past the end at byte %d", t, p)) end
        local r = buf(p, need)
        local v = t == "f" and r:float() or t == "d" and r:float() or t == "i" and r:int()
          or (t == "h" or t == "t") and r:int64() or r:uint()
        table.insert(args, { t = t, v = v, r = r })
        p = p + need
      elseif t == "s" or t == "S" then
        local s0 = p
        local s
        s, p = ostring(buf, p, to)
        table.insert(args, { t = "s", v = s, r = buf(s0, p - s0) })
      elseif t == "b" then
        if p + 4 > to then fail(string.format("blob size runs past the end at byte %d", p)) end
        local n = buf(p, 4):uint()
        local padded = math.floor((n + 3) / 4) * 4
        if n > to - p - 4 or padded > to - p - 4 then fail(string.format("blob runs past the end at byte %d", p)) end
        table.insert(args, { t = "b", v = n, r = buf(p, 4 + n) })
        p = p + 4 + padded
      elseif t == "T" or t == "F" or t == "N" or t == "I" then
        table.insert(args, { t = t })
      elseif t == "[" or t == "]" then
        -- Arrays: allowed one level deep, values read as above.
      else
        fail(string.format("unknown type tag '%s' at byte %d", t, p))
      end
    end
  end
  if p ~= to then fail(string.format("%d bytes after the end of a message at byte %d", to - p, p)) end
  ctx.count = ctx.count + 1
  local family, short = classify(addr)
  ctx.families[family] = (ctx.families[family] or 0) + 1
  ctx.kinds[short] = (ctx.kinds[short] or 0) + 1
  table.insert(ctx.order, short)
  if not tree then return end
  local node = tree:add(f.message, buf(at, to - at), addr, string.format("%s ,%s", addr, types))
  node:add(f.address, buf(at, math.min(#addr, to - at)), addr)
  local function num(i) return args[i] and (args[i].t == "f" or args[i].t == "i" or args[i].t == "d") end
  if (addr == "/VMC/Ext/Bone/Pos" or addr == "/VMC/Ext/Root/Pos") and #args >= 8
    and args[1].t == "s" and num(2) and num(3) and num(4) and num(5) and num(6) and num(7) and num(8) then
    node:add(addr == "/VMC/Ext/Bone/Pos" and f.bone_name or f.root_name, args[1].r, args[1].v)
    local fields = { f.px, f.py, f.pz, f.qx, f.qy, f.qz, f.qw }
    for i = 1, 7 do node:add(fields[i], args[i + 1].r, args[i + 1].v) end
    node:append_text(": " .. args[1].v)
  elseif addr == "/VMC/Ext/Blend/Val" and #args >= 2 and args[1].t == "s" and num(2) then
    node:add(f.blend_name, args[1].r, args[1].v)
    node:add(f.blend_value, args[2].r, args[2].v)
    node:append_text(": " .. args[1].v)
  elseif addr == "/VMC/Ext/T" and #args >= 1 and num(1) then
    node:add(f.time, args[1].r, args[1].v)
  elseif addr == "/VMC/Ext/OK" and #args >= 1 and args[1].t == "i" then
    node:add(f.ok_loaded, args[1].r, args[1].v)
  else
    typed_tracker(addr, args, node, num)
  end
  for _, a in ipairs(args) do
    if a.t == "i" or a.t == "c" then node:add(f.arg_int, a.r, a.v)
    elseif a.t == "f" then node:add(f.arg_float, a.r, a.v)
    elseif a.t == "d" then node:add(f.arg_double, a.r, a.v)
    elseif a.t == "s" then node:add(f.arg_string, a.r, a.v)
    elseif a.t == "b" then node:add(f.arg_blob, a.r)
    elseif a.t == "h" or a.t == "t" then node:add(f.arg_int64, a.r, a.v)
    end
  end
end

local function packet(buf, at, to, tree, ctx, depth)
  if to - at >= 8 and buf(at, 8):raw() == "#bundle\0" then
    if depth >= MAX_DEPTH then
      fail(string.format("nesting deeper than %d levels at byte %d", MAX_DEPTH, at))
    end
    if to - at < 16 then fail(string.format("bundle header runs past the end at byte %d", at)) end
    local node = tree and tree:add(f.bundle, buf(at, to - at), "#bundle",
      string.format("Bundle (offset %d, %d bytes)", at, to - at))
    if node then node:add(f.timetag, buf(at + 8, 8)) end
    local p = at + 16
    while p < to do
      if to - p < 4 then fail(string.format("bundle element size out of range at byte %d", p)) end
      local n = buf(p, 4):int()
      if n < 0 or n % 4 ~= 0 or n > to - p - 4 then
        fail(string.format("bundle element size out of range at byte %d", p))
      end
      packet(buf, p + 4, p + 4 + n, node, ctx, depth + 1)
      p = p + 4 + n
    end
    ctx.bundle = true
  else
    message(buf, at, to, tree, ctx)
  end
end

function vmc.dissector(buf, pinfo, tree)
  local len = buf:len()
  pinfo.cols.protocol = "VMC"
  local root = tree:add(vmc, buf(), "Virtual Motion Capture protocol (OSC)")
  -- First check the whole datagram, so a bad one shows no half-tree.
  local ok, err = pcall(packet, buf, 0, len, nil, { count = 0, kinds = {}, order = {}, families = {} }, 0)
  if not ok then
    local text = getmetatable(err) == Fail and ("not OSC: " .. err.reason)
      or ("dissector error: " .. tostring(err))
    root:add_proto_expert_info(e_malformed, text)
    pinfo.cols.info = "malformed: " .. text
    return len
  end
  local ctx = { count = 0, kinds = {}, order = {}, families = {} }
  local shown, e2 = pcall(packet, buf, 0, len, root, ctx, 0)
  -- A datagram of only VRChat or only VMT messages is named for it; any
  -- VMC (or other OSC) keeps "VMC".
  local fam = ctx.families
  if (fam.vrchat or 0) == ctx.count and ctx.count > 0 then
    pinfo.cols.protocol = "VRChat OSC"
  elseif (fam.vmt or 0) == ctx.count and ctx.count > 0 then
    pinfo.cols.protocol = "VMT"
  end
  if not shown then
    root:add_proto_expert_info(e_malformed, "dissector error: " .. tostring(e2))
  end
  root:add(f.messages, ctx.count)
  -- Info: "bundle 57 msgs: 55 Bone/Pos, Root/Pos, OK, T" (kinds in first-seen order).
  local seen, parts = {}, {}
  for _, k in ipairs(ctx.order) do
    if not seen[k] then
      seen[k] = true
      local n = ctx.kinds[k]
      table.insert(parts, n > 1 and string.format("%d %s", n, k) or k)
    end
  end
  pinfo.cols.info = string.format("%s %d msg%s: %s", ctx.bundle and "bundle" or "message",
    ctx.count, ctx.count == 1 and "" or "s", table.concat(parts, ", "))
  return len
end

-- Registered at load (so "Decode As" and tshark -d know it), and again
-- when the port preferences change.
local registered = { 39539, 39540, 9000, 39570 }
for _, p in ipairs(registered) do DissectorTable.get("udp.port"):add(p, vmc) end
function vmc.init()
  local udp = DissectorTable.get("udp.port")
  for _, p in ipairs(registered) do udp:remove(p, vmc) end
  registered = { prefs.port1, prefs.port2, prefs.port3, prefs.port4 }
  for _, p in ipairs(registered) do udp:add(p, vmc) end
end
