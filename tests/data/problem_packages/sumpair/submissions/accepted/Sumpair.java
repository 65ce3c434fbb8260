import java.io.*;
import java.util.*;

public class Sumpair {
    public static void main(String[] args) throws IOException {
        StreamTokenizer in = new StreamTokenizer(new BufferedReader(new InputStreamReader(System.in)));
        in.resetSyntax();
        in.wordChars('-', '-');
        in.wordChars('0', '9');
        in.whitespaceChars(0, ' ');
        in.nextToken();
        int n = Integer.parseInt(in.sval);
        in.nextToken();
        long k = Long.parseLong(in.sval);
        HashMap<Long, Long> seen = new HashMap<>();
        long pairs = 0;
        for (int i = 0; i < n; i++) {
            in.nextToken();
            long x = Long.parseLong(in.sval);
            pairs += seen.getOrDefault(k - x, 0L);
            seen.merge(x, 1L, Long::sum);
        }
        System.out.println(pairs);
    }
}
