// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmCore
@testable import TonearmWindow

/// AVPlayerLayer's `videoRect`, alone: where a picture of a given display size goes in given
/// bounds for each gravity, with the frame's pixel aspect and rotation applied.
@Suite struct VideoGeometryTests {
    let bounds = VideoRect(x: 0, y: 0, width: 640, height: 360)

    @Test func aspectFitsTheWholePictureWithBarsOnTheSidesThatAreTooLong() {
        // 4:3 in 16:9: full height, bars left and right.
        let r = VideoGeometry.videoRect(displaySize: (640, 480), in: bounds, gravity: .resizeAspect)
        #expect(r == VideoRect(x: 80, y: 0, width: 480, height: 360))
        // 2.35:1 in 16:9: full width, bars top and bottom.
        let wide = VideoGeometry.videoRect(displaySize: (1880, 800), in: bounds, gravity: .resizeAspect)
        #expect(wide.x == 0 && wide.width == 640)
        #expect(abs(wide.height - 640 * 800.0 / 1880) < 1e-9)
        #expect(abs(wide.midY - 180) < 1e-9)
    }

    @Test func aspectFillCoversTheBoundsAndOverflowsEvenly() {
        let r = VideoGeometry.videoRect(displaySize: (640, 480), in: bounds, gravity: .resizeAspectFill)
        #expect(r.width == 640)
        #expect(abs(r.height - 480) < 1e-9)
        #expect(abs(r.y - -60) < 1e-9)
        #expect(r.x == 0)
        #expect(r.x <= bounds.x && r.y <= bounds.y && r.maxX >= bounds.maxX && r.maxY >= bounds.maxY)
    }

    @Test func resizeIsTheBounds() {
        for size in [(640, 480), (1, 1000), (1920, 1080)] {
            #expect(VideoGeometry.videoRect(displaySize: size, in: bounds, gravity: .resize) == bounds)
        }
    }

    @Test func boundsAwayFromTheOriginKeepTheirOffset() {
        let region = VideoRect(x: 100, y: 50, width: 200, height: 200)
        let r = VideoGeometry.videoRect(displaySize: (400, 200), in: region, gravity: .resizeAspect)
        #expect(r == VideoRect(x: 100, y: 100, width: 200, height: 100))
    }

    @Test func oddSizesStayCentredAndRoundToWholeEdges() {
        // 3×1 in 7×5: 7 × 2.333…, centred at y = 2.5.
        let odd = VideoRect(x: 0, y: 0, width: 7, height: 5)
        let r = VideoGeometry.videoRect(displaySize: (3, 1), in: odd, gravity: .resizeAspect)
        #expect(r.width == 7)
        #expect(abs(r.height - 7.0 / 3) < 1e-9)
        #expect(abs(r.midY - 2.5) < 1e-9)
        let whole = r.integral
        #expect(whole == VideoRect(x: 0, y: 1, width: 7, height: 3))  // edges 1.333… → 1 and 3.666… → 4
        // 641×479 bounds with a 16:9 picture: every edge whole, the bars differ by one pixel at most.
        let b = VideoRect(x: 0, y: 0, width: 641, height: 479)
        let v = VideoGeometry.videoRect(displaySize: (1920, 1080), in: b, gravity: .resizeAspect).integral
        #expect(v.width == 641)
        let top = v.y, bottom = b.maxY - v.maxY
        #expect(abs(top - bottom) <= 1)
        #expect(v.x == v.x.rounded() && v.height == v.height.rounded())
    }

    @Test func emptySizesGiveAnEmptyRectangleAtTheCentre() {
        let r = VideoGeometry.videoRect(displaySize: (0, 0), in: bounds, gravity: .resizeAspect)
        #expect(r.isEmpty && r.midX == 320 && r.midY == 180)
        let e = VideoGeometry.videoRect(displaySize: (640, 480), in: .zero, gravity: .resizeAspectFill)
        #expect(e.isEmpty)
    }

    /// A frame's display size: anamorphic pixels widen it, a quarter turn swaps it.
    func frame(width: Int, height: Int, aspect: VideoFrame.PixelAspectRatio = .square, rotation: Int = 0) -> VideoFrame {
        VideoFrame(pixelFormat: .rgba, width: width, height: height, planes: [], time: 0,
                   pixelAspectRatio: aspect, rotation: rotation)
    }

    @Test func anamorphicPixelsWidenThePicture() {
        // 720×576 PAL DV with 16:15 pixels is 768×576 (4:3): in 640×360, 480 wide; square pixels would be 450.
        let pal = frame(width: 720, height: 576, aspect: .init(horizontal: 16, vertical: 15))
        let r = VideoGeometry.videoRect(of: pal, in: bounds, gravity: .resizeAspect)
        #expect(r == VideoRect(x: 80, y: 0, width: 480, height: 360))
        // 4:3 pixels on 480×360 give 640×360: the whole of a 16:9 window, no bars.
        let dv = frame(width: 480, height: 360, aspect: .init(horizontal: 4, vertical: 3))
        #expect(VideoGeometry.videoRect(of: dv, in: bounds, gravity: .resizeAspect) == bounds)
        let square = frame(width: 480, height: 360)
        #expect(VideoGeometry.videoRect(of: square, in: bounds, gravity: .resizeAspect).width == 480)
    }

    @Test func quarterTurnsSwapTheShapeAndTheTextureIsDrawnTurnedAboutTheSameCentre() {
        for rotation in [90, 270, -90] {
            let portrait = frame(width: 1280, height: 720, rotation: rotation)
            let r = VideoGeometry.videoRect(of: portrait, in: bounds, gravity: .resizeAspect)
            // Upright 720×1280 in 640×360: 360 high, 202.5 wide, centred.
            #expect(r.height == 360)
            #expect(abs(r.width - 202.5) < 1e-9)
            #expect(abs(r.midX - 320) < 1e-9)
            let (destination, angle) = VideoGeometry.placement(videoRect: r, rotation: portrait.rotation)
            #expect(angle == Double(portrait.rotation))
            #expect(destination.width == r.height && destination.height == r.width)
            #expect(destination.midX == r.midX && destination.midY == r.midY)
        }
        let upsideDown = frame(width: 1280, height: 720, rotation: 180)
        let r = VideoGeometry.videoRect(of: upsideDown, in: bounds, gravity: .resizeAspect)
        #expect(r == bounds)
        #expect(VideoGeometry.placement(videoRect: r, rotation: 180) == (bounds, 180))
    }

    @Test func anamorphicAndTurnedTogether() {
        // 4:3 pixels widen the coded width first (480 → 640), then the quarter turn: 360×640 upright.
        let f = frame(width: 480, height: 360, aspect: .init(horizontal: 4, vertical: 3), rotation: 90)
        #expect(f.displaySize == (360, 640))
        let r = VideoGeometry.videoRect(of: f, in: VideoRect(x: 0, y: 0, width: 360, height: 640), gravity: .resizeAspect)
        #expect(r == VideoRect(x: 0, y: 0, width: 360, height: 640))
        let (destination, _) = VideoGeometry.placement(videoRect: r, rotation: 90)
        #expect(destination == VideoRect(x: -140, y: 140, width: 640, height: 360))
    }

    @Test func aWindowForAPictureLargerThanTheScreenIsScaledDownToFit() {
        // 1920×1080 on 1366×768: 90 % of the screen is 1229.4×691.2; the height limits.
        let s = VideoGeometry.windowSize(for: (1920, 1080), screen: (1366, 768))
        #expect(s == (1228, 691))
        #expect(abs(Double(s.width) / Double(s.height) - 16.0 / 9) < 0.01)
        // Smaller than the screen: its own size, never scaled up.
        #expect(VideoGeometry.windowSize(for: (640, 360), screen: (1920, 1080)) == (640, 360))
        // Portrait on landscape: the height limits. Unknown screen: as it is.
        #expect(VideoGeometry.windowSize(for: (1080, 1920), screen: (1920, 1080)) == (546, 972))
        #expect(VideoGeometry.windowSize(for: (1080, 1920), screen: (0, 0)) == (1080, 1920))
        #expect(VideoGeometry.windowSize(for: (0, 0), screen: (100, 100)) == (1, 1))
    }

    @Test func framesWhosePlanesCannotHoldThePictureAreNamed() {
        let w = 5, h = 3
        let good = VideoFrame(pixelFormat: .yuv420p, width: w, height: h, planes: [
            .init(bytes: .init(repeating: 0, count: 8 * h), bytesPerRow: 8, width: w, height: h),
            .init(bytes: .init(repeating: 0, count: 3 * 2), bytesPerRow: 3, width: 3, height: 2),
            .init(bytes: .init(repeating: 0, count: 3 * 2), bytesPerRow: 3, width: 3, height: 2),
        ], time: 0)
        #expect(good.layoutProblem == nil)
        var short = good
        short.planes[2].bytes.removeLast()
        #expect(short.layoutProblem != nil)
        var missing = good
        missing.planes.removeLast()
        #expect(missing.layoutProblem != nil)
        let rgba = VideoFrame(pixelFormat: .rgba, width: w, height: h,
                              planes: [.init(bytes: .init(repeating: 0, count: 4 * w * h), bytesPerRow: 4 * w - 1, width: w, height: h)], time: 0)
        #expect(rgba.layoutProblem != nil)
    }
}
