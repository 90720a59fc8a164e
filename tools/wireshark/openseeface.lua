-- OpenSeeFace's face tracking stream (facetracker.py to its Unity receiver
-- or VSeeFace, UDP 11573) for Wireshark and tshark.
--
-- A datagram is one camera frame: its faces, 1785 bytes each, back to back,
-- little-endian. A face: f64 clock (seconds since 1970), i32 face id, f32
-- camera width and height, f32 right and left eye openness, u8 success (the
-- 3D fit), f32 fit error, f32 quaternion x y z w, f32 Euler x y z (degrees),
-- f32 translation x y z, 68 f32 landmark confidences, 68 landmarks (f32
-- column, row), 70 3D points (f32 x y z as sent), 14 f32 features. A
-- datagram that is not whole faces is refused, and odd values are flagged,
-- with the same reason and offset as mocap-tools' decoder (mocap-dump). It
-- never raises a Lua error: every read is checked against the buffer.
--
-- Install: copy into ~/.local/lib/wireshark/plugins/ (see README.md here).

local osf = Proto("openseeface", "OpenSeeFace")

local FACE_LEN = 1785
local FEATURES = {
  "eye_l", "eye_r", "eyebrow_steepness_l", "eyebrow_updown_l", "eyebrow_quirk_l",
  "eyebrow_steepness_r", "eyebrow_updown_r", "eyebrow_quirk_r",
  "mouth_corner_updown_l", "mouth_corner_inout_l", "mouth_corner_updown_r",
  "mouth_corner_inout_r", "mouth_open", "mouth_wide",
}
-- Offsets inside a face.
local AT = {
  time = 0, id = 8, resolution = 12, eyes = 20, success = 28, fit_error = 29,
  quaternion = 33, euler = 49, translation = 61, confidence = 73,
  landmarks = 345, points = 889, features = 1729,
}

local f = {
  kind = ProtoField.string("openseeface.kind", "Datagram kind"),
  faces = ProtoField.uint32("openseeface.faces", "Faces"),
  time = ProtoField.double("openseeface.time", "Clock (s since 1970)"),
  id = ProtoField.int32("openseeface.id", "Face id"),
  width = ProtoField.double("openseeface.width", "Camera width (px)"),
  height = ProtoField.double("openseeface.height", "Camera height (px)"),
  eye_open_r = ProtoField.double("openseeface.eye_open_r", "Right eye openness"),
  eye_open_l = ProtoField.double("openseeface.eye_open_l", "Left eye openness"),
  success = ProtoField.uint8("openseeface.success", "3D fit succeeded"),
  fit_error = ProtoField.double("openseeface.fit_error", "3D fit error"),
  quat_x = ProtoField.double("openseeface.quat.x", "x"),
  quat_y = ProtoField.double("openseeface.quat.y", "y"),
  quat_z = ProtoField.double("openseeface.quat.z", "z"),
  quat_w = ProtoField.double("openseeface.quat.w", "w"),
  euler_x = ProtoField.double("openseeface.euler.x", "x (deg)"),
  euler_y = ProtoField.double("openseeface.euler.y", "y (deg)"),
  euler_z = ProtoField.double("openseeface.euler.z", "z (deg)"),
  translation_x = ProtoField.double("openseeface.translation.x", "x"),
  translation_y = ProtoField.double("openseeface.translation.y", "y"),
  translation_z = ProtoField.double("openseeface.translation.z", "z"),
  confidence = ProtoField.double("openseeface.confidence", "Confidence"),
  landmark_col = ProtoField.double("openseeface.landmark.column", "Column (px)"),
  landmark_row = ProtoField.double("openseeface.landmark.row", "Row (px)"),
  point_x = ProtoField.double("openseeface.point.x", "x"),
  point_y = ProtoField.double("openseeface.point.y", "y (as sent: negated)"),
  point_z = ProtoField.double("openseeface.point.z", "z (as sent: negated)"),
  feature_name = ProtoField.string("openseeface.feature.name", "Feature"),
  feature_value = ProtoField.double("openseeface.feature.value", "Value"),
}
osf.fields = {}
for _, v in pairs(f) do table.insert(osf.fields, v) end

local e_malformed = ProtoExpert.new("openseeface.malformed", "Malformed OpenSeeFace datagram",
  expert.group.MALFORMED, expert.severity.ERROR)
local e_odd = ProtoExpert.new("openseeface.odd", "Odd value (decoded all the same)",
  expert.group.PROTOCOL, expert.severity.WARN)
osf.experts = { e_malformed, e_odd }

local prefs = osf.prefs
prefs.port = Pref.uint("UDP port", 11573, "UDP port the tracker sends to")

local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

local function at(text, offset, field)
  return string.format("%s at offset %d in `%s`", text, offset, field)
end

-- The head's odd values at `base` (our decoder's order), or nil when the
-- head does not fit in the buffer.
local function head_warnings(buf, base)
  if buf:len() < base + AT.confidence then return nil end
  local odd = {}
  local time = buf(base + AT.time, 8):le_float()
  if not (finite(time) and time >= 0) then
    table.insert(odd, at("clock is not a time", base + AT.time, "time"))
  end
  local w = buf(base + AT.resolution, 4):le_float()
  local h = buf(base + AT.resolution + 4, 4):le_float()
  local function size(v) return v >= 1 and v <= 65536 and v % 1 == 0 end
  if not (size(w) and size(h)) then
    table.insert(odd, at("resolution is not whole pixels from 1 to 65536", base + AT.resolution, "resolution"))
  end
  local r = buf(base + AT.eyes, 4):le_float()
  local l = buf(base + AT.eyes + 4, 4):le_float()
  local function unit(v) return v >= 0 and v <= 1 end
  if not (unit(r) and unit(l)) then
    table.insert(odd, at("eye openness is outside 0 to 1", base + AT.eyes, "eye_open"))
  end
  local s = buf(base + AT.success, 1):uint()
  if s > 1 then
    table.insert(odd, at(string.format("success byte %d (expected 0 or 1)", s), base + AT.success, "success"))
  end
  return odd
end

local function triple(buf, node, o, fx, fy, fz)
  node:add(fx, buf(o, 4), buf(o, 4):le_float())
  node:add(fy, buf(o + 4, 4), buf(o + 4, 4):le_float())
  node:add(fz, buf(o + 8, 4), buf(o + 8, 4):le_float())
end

local function face(buf, root, base, odd)
  local node = root:add(osf, buf(base, FACE_LEN), "Face")
  for _, w in ipairs(head_warnings(buf, base) or {}) do table.insert(odd, w) end
  local id = buf(base + AT.id, 4):le_int()
  node:append_text(string.format(" %d", id))
  node:add_le(f.time, buf(base + AT.time, 8))
  node:add_le(f.id, buf(base + AT.id, 4))
  node:add(f.width, buf(base + AT.resolution, 4), buf(base + AT.resolution, 4):le_float())
  node:add(f.height, buf(base + AT.resolution + 4, 4), buf(base + AT.resolution + 4, 4):le_float())
  node:add(f.eye_open_r, buf(base + AT.eyes, 4), buf(base + AT.eyes, 4):le_float())
  node:add(f.eye_open_l, buf(base + AT.eyes + 4, 4), buf(base + AT.eyes + 4, 4):le_float())
  local success = buf(base + AT.success, 1):uint()
  node:add(f.success, buf(base + AT.success, 1))
  node:add(f.fit_error, buf(base + AT.fit_error, 4), buf(base + AT.fit_error, 4):le_float())
  local q = node:add(osf, buf(base + AT.quaternion, 16), "Quaternion (tracker's camera frame)")
  triple(buf, q, base + AT.quaternion, f.quat_x, f.quat_y, f.quat_z)
  q:add(f.quat_w, buf(base + AT.quaternion + 12, 4), buf(base + AT.quaternion + 12, 4):le_float())
  local e = node:add(osf, buf(base + AT.euler, 12), "Euler angles")
  triple(buf, e, base + AT.euler, f.euler_x, f.euler_y, f.euler_z)
  local t = node:add(osf, buf(base + AT.translation, 12), "Translation")
  triple(buf, t, base + AT.translation, f.translation_x, f.translation_y, f.translation_z)
  local c = node:add(osf, buf(base + AT.confidence, 4 * 68), "Landmark confidences (68)")
  for k = 0, 67 do
    local o = base + AT.confidence + 4 * k
    c:add(f.confidence, buf(o, 4), buf(o, 4):le_float())
  end
  local lm = node:add(osf, buf(base + AT.landmarks, 8 * 68), "Landmarks (68)")
  for k = 0, 67 do
    local o = base + AT.landmarks + 8 * k
    lm:add(f.landmark_col, buf(o, 4), buf(o, 4):le_float())
    lm:add(f.landmark_row, buf(o + 4, 4), buf(o + 4, 4):le_float())
  end
  local p = node:add(osf, buf(base + AT.points, 12 * 70), "3D points (68 landmarks, right and left eyeball)")
  for k = 0, 69 do
    triple(buf, p, base + AT.points + 12 * k, f.point_x, f.point_y, f.point_z)
  end
  local fs = node:add(osf, buf(base + AT.features, 4 * 14), "Features")
  for k = 0, 13 do
    local o = base + AT.features + 4 * k
    local v = buf(o, 4):le_float()
    if not finite(v) then
      table.insert(odd, at(string.format("feature %d is not finite", k), o, "features"))
    end
    local item = fs:add(f.feature_name, buf(o, 4), FEATURES[k + 1])
    item:append_text(string.format(" = %.6g", v))
    item:add(f.feature_value, buf(o, 4), v)
  end
  return id, success
end

local function dissect(buf, pinfo, root)
  local len = buf:len()
  local whole = math.floor(len / FACE_LEN)
  local why
  if len == 0 then
    why = at("empty datagram", 0, "face")
  elseif len % FACE_LEN ~= 0 then
    why = at(string.format("truncated: need %d bytes, have %d", FACE_LEN, len - whole * FACE_LEN),
      whole * FACE_LEN, "face")
  end
  if why then
    root:add(f.kind, "malformed")
    root:add_proto_expert_info(e_malformed, why)
    pinfo.cols.info = "malformed: " .. why
    return
  end
  root:add(f.kind, "frame")
  root:add(f.faces, whole)
  local odd, ids, fitted = {}, {}, 0
  for k = 0, whole - 1 do
    local id, success = face(buf, root, k * FACE_LEN, odd)
    table.insert(ids, tostring(id))
    if success ~= 0 then fitted = fitted + 1 end
  end
  for _, w in ipairs(odd) do root:add_proto_expert_info(e_odd, w) end
  pinfo.cols.info = string.format("frame t=%.3f faces=%d ids=%s fitted=%d",
    buf(0, 8):le_float(), whole, table.concat(ids, ","), fitted)
end

function osf.dissector(buf, pinfo, tree)
  pinfo.cols.protocol = "OpenSeeFace"
  local root = tree:add(osf, buf(), "OpenSeeFace")
  local ok, err = pcall(dissect, buf, pinfo, root)
  if not ok then
    -- A bug in this script: say so in the tree rather than as a Lua error.
    root:add_proto_expert_info(e_malformed, "dissector error: " .. tostring(err))
  end
  return buf:len()
end

-- Registered at load (so "Decode As" and tshark -d know it), and again
-- when the port preference changes.
local registered = 11573
DissectorTable.get("udp.port"):add(registered, osf)
function osf.init()
  local udp = DissectorTable.get("udp.port")
  if registered ~= prefs.port then
    udp:remove(registered, osf)
    registered = prefs.port
    udp:add(registered, osf)
  end
end

-- On other ports, by content: whole faces (or a cut one) whose first head
-- is believable, as mocap-tools' sniff accepts it.
local function heuristic(buf, pinfo, tree)
  local ok, odd = pcall(head_warnings, buf, 0)
  if not ok or odd == nil or #odd > 0 then return false end
  osf.dissector(buf, pinfo, tree)
  return true
end
osf:register_heuristic("udp", heuristic)
