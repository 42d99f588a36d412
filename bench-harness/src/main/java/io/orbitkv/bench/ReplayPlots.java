package io.orbitkv.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Rectangle;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;
import org.jfree.svg.SVGUtils;

/**
 * The replay's plots, each written as PNG and SVG (JFreeChart, JFreeSVG): the hit fraction over the replay per mode
 * with failure markers, the TTFT proxy CDF per mode, and with a capacity sweep the hit fraction against capacity next
 * to the isolated, global and infinite references.
 */
final class ReplayPlots
{
    static final int WIDTH = 900;
    static final int HEIGHT = 520;

    private ReplayPlots()
    {
    }

    static List<String> write(
        final Path dir,
        final Map<String, Object> results,
        final Map<String, ReplayOutcomes> outcomes,
        final double prefillTokensPerS) throws IOException
    {
        Files.createDirectories(dir);
        final List<String> files = new ArrayList<>();
        final Map<?, ?> modes = (Map<?, ?>)results.get("modes");
        files.addAll(save(dir, "hit-rate-over-time", hitOverTime(modes)));
        files.addAll(save(dir, "ttft-cdf", ttftCdf(outcomes, prefillTokensPerS)));
        if (results.containsKey("capacitySweep"))
        {
            files.addAll(save(dir, "hit-rate-vs-capacity", capacity((Map<?, ?>)results.get("capacitySweep"))));
        }
        return files;
    }

    private static JFreeChart hitOverTime(final Map<?, ?> modes)
    {
        final XYSeriesCollection data = new XYSeriesCollection();
        final List<ValueMarker> markers = new ArrayList<>();
        for (final Map.Entry<?, ?> e : modes.entrySet())
        {
            final Map<?, ?> figures = (Map<?, ?>)e.getValue();
            final XYSeries series = new XYSeries(e.getKey().toString());
            for (final Object p : (List<?>)figures.get("timeline"))
            {
                final Map<?, ?> point = (Map<?, ?>)p;
                series.add(((Number)point.get("seconds")).doubleValue(), ((Number)point.get("hit")).doubleValue());
            }
            data.addSeries(series);
            final Object failures = figures.get("failures");
            if (failures instanceof List<?> list)
            {
                for (final Object f : list)
                {
                    final Map<?, ?> event = (Map<?, ?>)f;
                    marker(markers, event.get("firedAtSeconds"), e.getKey() + ": " + event.get("spec"), Color.RED);
                    marker(markers, event.get("endedAtSeconds"), event.get("spec") + " ended", Color.GRAY);
                }
            }
        }
        final JFreeChart chart = lineChart("Block hit fraction over the replay (windows of 2% of the requests)",
            "seconds since the replay began", "hit fraction (restored / referenced blocks)", data, false);
        for (final ValueMarker m : markers)
        {
            chart.getXYPlot().addDomainMarker(m);
        }
        ((NumberAxis)chart.getXYPlot().getRangeAxis()).setRange(0, 1);
        return chart;
    }

    private static void marker(final List<ValueMarker> markers, final Object at, final String label, final Color color)
    {
        if (at instanceof Number seconds)
        {
            final ValueMarker m = new ValueMarker(seconds.doubleValue(), color, new BasicStroke(1.5f));
            m.setLabel(label);
            m.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
            m.setLabelTextAnchor(TextAnchor.TOP_LEFT);
            markers.add(m);
        }
    }

    private static JFreeChart ttftCdf(final Map<String, ReplayOutcomes> outcomes, final double prefillTokensPerS)
    {
        final XYSeriesCollection data = new XYSeriesCollection();
        for (final Map.Entry<String, ReplayOutcomes> e : outcomes.entrySet())
        {
            final double[] ttft = ReplayFigures.ttftMs(e.getValue(), prefillTokensPerS);
            Arrays.sort(ttft);
            final XYSeries series = new XYSeries(e.getKey());
            final int step = Math.max(1, ttft.length / 400);
            for (int i = 0; i < ttft.length; i += step)
            {
                series.add(Math.max(0.01, ttft[i]), (i + 1.0) / ttft.length);
            }
            series.add(Math.max(0.01, ttft[ttft.length - 1]), 1.0);
            data.addSeries(series);
        }
        final JFreeChart chart = lineChart("TTFT proxy CDF (lookup + restore + missed tokens at " +
            (long)prefillTokensPerS + " tokens/s)", "TTFT proxy (ms, log scale)", "fraction of requests", data, false);
        final LogAxis axis = new LogAxis("TTFT proxy (ms, log scale)");
        axis.setNumberFormatOverride(new java.text.DecimalFormat("0.###"));
        chart.getXYPlot().setDomainAxis(axis);
        return chart;
    }

    private static JFreeChart capacity(final Map<?, ?> sweep)
    {
        final XYSeriesCollection data = new XYSeriesCollection();
        XYSeries measured = null;
        final XYSeries isolated = new XYSeries("isolated LRU per host (reference)");
        final XYSeries global = new XYSeries("one global LRU of N x C (reference)");
        final XYSeries infinite = new XYSeries("infinite cache (reference)");
        for (final Object v : sweep.values())
        {
            final Map<?, ?> point = (Map<?, ?>)v;
            if (null == measured)
            {
                measured = new XYSeries(point.get("mode") + " (measured)");
            }
            final double c = ((Number)point.get("poolBlocks")).doubleValue();
            final Map<?, ?> ref = (Map<?, ?>)point.get("reference");
            measured.add(c, ((Number)point.get("hitFraction")).doubleValue());
            isolated.add(c, ((Number)ref.get("isolatedLru")).doubleValue());
            global.add(c, ((Number)ref.get("globalLru")).doubleValue());
            infinite.add(c, ((Number)ref.get("infinite")).doubleValue());
        }
        if (null != measured)
        {
            data.addSeries(measured);
        }
        data.addSeries(isolated);
        data.addSeries(global);
        data.addSeries(infinite);
        return lineChart("Block hit fraction against capacity per host", "blocks per host (C)", "hit fraction", data, true);
    }

    private static JFreeChart lineChart(
        final String title, final String x, final String y, final XYSeriesCollection data, final boolean shapes)
    {
        final NumberAxis xAxis = new NumberAxis(x);
        xAxis.setAutoRangeIncludesZero(false);
        final NumberAxis yAxis = new NumberAxis(y);
        final XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, shapes);
        for (int i = 0; i < data.getSeriesCount(); i++)
        {
            renderer.setSeriesStroke(i, new BasicStroke(2f));
        }
        final XYPlot plot = new XYPlot(data, xAxis, yAxis, renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        final JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        return chart;
    }

    private static List<String> save(final Path dir, final String name, final JFreeChart chart) throws IOException
    {
        final Path png = dir.resolve(name + ".png");
        final Path svg = dir.resolve(name + ".svg");
        ChartUtils.saveChartAsPNG(png.toFile(), chart, WIDTH, HEIGHT);
        final SVGGraphics2D g = new SVGGraphics2D(WIDTH, HEIGHT);
        chart.draw(g, new Rectangle(0, 0, WIDTH, HEIGHT));
        SVGUtils.writeToSVG(svg.toFile(), g.getSVGElement());
        return List.of(png.toString(), svg.toString());
    }
}
